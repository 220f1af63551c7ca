// The max_batch flag's probe: each power of two is tried with a fresh model and the very step the run will time,
// until one runs out of memory, so the batch chosen is one that really fits.
#include "bench/step/max_batch.h"

#include "bench/device.h"
#include "bench/oom.h"
#include "bench/step/train_step.h"
#include "bench/tokens.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace stepwise::bench {

namespace {

bool fits(const RunConfig& config, int64_t batch, std::string& error) {
  try {
    RunConfig c = config;
    c.batch_size = batch;
    // One batch of windows: the sampler reshuffles them for each further step.
    auto tokens = std::make_shared<const Tokens>(
        synthetic_tokens(static_cast<size_t>(batch * c.seq_len + 1), c.model.vocab_size(), c.seed));
    TrainState state = make_train_state(c, tokens);
    const auto step = make_step(state, c);  // the step the run will time, so the batch chosen really fits
    for (int i = 0; i < step->probe_steps(); ++i) (*step)();
    synchronize(c.device);
    return true;
  } catch (const std::exception& e) {
    if (!is_out_of_memory(e)) throw;
    error = short_message(e);
  }
  release_cached_memory(config.device);
  return false;
}

}  // namespace

MaxBatchProbe probe_max_batch(const RunConfig& config) {
  MaxBatchProbe probe;
  probe.base = config.batch_size;
  probe.limit = std::max(config.effective_max_batch_limit(), config.batch_size);
  probe.time_cap_s = config.effective_max_batch_time();
  int64_t batch = config.batch_size;
  const auto began = std::chrono::steady_clock::now();
  while (batch <= probe.limit) {
    std::string error;
    const bool fit = fits(config, batch, error);
    probe.tried.push_back({batch, fit, error});
    release_cached_memory(config.device);
    if (!fit) break;
    probe.chosen = batch;
    // Bounded by its own cap: a slow device (bf16 emulated on a CPU) stops growing the batch at --max-batch-time.
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - began;
    if (elapsed.count() >= config.effective_max_batch_time()) {
      probe.stopped = "--max-batch-time (" + std::to_string(static_cast<int>(config.effective_max_batch_time())) +
                      " s) reached after batch " + std::to_string(batch);
      break;
    }
    int64_t next = 1;
    while (next <= batch) next <<= 1;  // the next power of two above
    batch = next;
  }
  if (probe.chosen == 0)
    throw std::runtime_error("max_batch: even the base batch " + std::to_string(config.batch_size) +
                             " does not fit: " + probe.tried.front().error);
  return probe;
}

MaxBatchProbe::Estimate estimate_max_batch(const RunConfig& config, int64_t base, int64_t limit, double memory_bytes) {
  MaxBatchProbe::Estimate e;
  const double element = config.bf16 && config.bf16_mode == Bf16Mode::Pure ? 2 : 4;
  e.activation_bytes_per_sequence =
      config.model.activation_bytes_per_sequence(config.seq_len, element, config.device.is_cuda());
  // Weights, gradients and AdamW's two moments, each like the parameters (fp32 unless pure bf16).
  e.state_bytes = 4 * static_cast<double>(config.model.parameter_count()) * element +
                  config.model.chunked_ce_step_bytes(base * config.seq_len, element);  // chunked_ce's, once a step
  e.memory_bytes = memory_bytes;
  e.largest_batch = std::max<int64_t>(
      0, static_cast<int64_t>(std::floor((memory_bytes - e.state_bytes) / e.activation_bytes_per_sequence)));
  for (int64_t b = base; b <= limit && b <= e.largest_batch; b *= 2) e.largest_power_of_two = b;
  return e;
}

std::optional<int64_t> smaller_fit(const MaxBatchProbe& probe, int64_t batch) {
  std::optional<int64_t> best;
  for (const auto& t : probe.tried)
    if (t.fit && t.batch < batch && (!best || t.batch > *best)) best = t.batch;
  return best;
}

}  // namespace stepwise::bench
