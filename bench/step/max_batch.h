// The max_batch probe: the largest power-of-two batch for which forward + backward + optimizer step fit.
#pragma once

#include "bench/run_config.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stepwise::bench {

struct MaxBatchProbe {
  struct Try {
    int64_t batch;
    bool fit;
    std::string error;  // the out-of-memory message when it did not fit
  };
  int64_t base = 0, limit = 0, chosen = 0;
  std::vector<Try> tried;
  double time_cap_s = 0;               // --max-batch-time in effect
  std::optional<std::string> stopped;  // why the probe stopped before an out-of-memory or the limit (its time cap)

  // What GPTConfig's activation estimate predicts, beside what the probe found: the batch whose weights, gradients,
  // AdamW state (and chunked_ce's once-a-step head buffers: state_bytes) and estimated activations fit in the memory
  // there is (the GPU's, or the host's available).
  struct Estimate {
    double activation_bytes_per_sequence = 0, state_bytes = 0, memory_bytes = 0;
    int64_t largest_batch = 0;         // floor((memory - state) / activation per sequence)
    int64_t largest_power_of_two = 0;  // the probe's own rule: powers of two from the base, up to the limit
  };
  std::optional<Estimate> estimate;
};

// The estimate for `config` when `memory_bytes` are available to it.
MaxBatchProbe::Estimate estimate_max_batch(const RunConfig& config, int64_t base, int64_t limit, double memory_bytes);

// Tries the base batch, then each power of two above it up to the limit, each with a fresh model and the step the
// run will time (two eager steps, or a CUDA graph's warm-up, capture and replay); stops at the first
// out-of-memory error (or at its time cap, --max-batch-time), releases the cached memory, and keeps the last that fit.
// Throws std::runtime_error if not even the base batch fits.
MaxBatchProbe probe_max_batch(const RunConfig& config);

// The largest batch the probe found to fit that is smaller than `batch`, if any.
std::optional<int64_t> smaller_fit(const MaxBatchProbe& probe, int64_t batch);

}  // namespace stepwise::bench
