// Runs one configuration: optional batch probe, warm-up, measured steps until the noise target or a cap,
// then the statistics. Failures (out of memory, non-finite loss, interruption, errors) are recorded, not thrown.
#pragma once

#include "bench/distributed/collectives.h"
#include "bench/measure/mfu.h"
#include "bench/memory.h"
#include "bench/phases.h"
#include "bench/run_config.h"
#include "bench/stats.h"
#include "bench/step/max_batch.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stepwise::bench {

struct StepRecord {
  double ms = 0;
  double loss = 0;               // NaN or inf is kept as is; JSON writes it as null
  std::optional<double> cpu_ms;  // a CPU step's process CPU time (ChunkReading::cpu_ms); none on a GPU
};

struct Progress {
  bool warmup = false;
  size_t step = 0;  // steps done in the current phase
  const RunConfig* config = nullptr;
  std::optional<double> tokens_per_s;  // from the median so far
  std::optional<double> noise;
};

struct RunHooks {
  std::function<void(const Progress&)> on_progress;
  const std::atomic<bool>* interrupted = nullptr;  // set by a SIGINT handler: stop at the next step boundary
  // Data parallel: this rank's group. Stopping, interruption and the probe's batch are then decided by all ranks
  // together, losses are averaged over ranks, and a step's time is the slowest rank's.
  std::shared_ptr<Collectives> collectives;
  // Tests only: fail the configuration before this measured step, as a rank that runs out of memory alone would.
  std::optional<size_t> fail_before_step;
};

struct RunResult {
  std::string implementation = "libtorch";  // or the python-* that ran the step (bench/python/python_step.h)
  std::string status = "ok";                // "ok" or "failed"
  std::optional<std::string> reason;
  int64_t batch_size = 0;                              // the batch measured (after the probe)
  std::string optimizer;                               // the AdamW implementation that ran
  std::string clock;                                   // "cuda_event", "steady_clock" (C++) or "perf_counter" (Python)
  std::optional<std::string> sdpa_backend_used;        // flash layout: the kernel family SDPA ran (model/sdpa.h)
  std::optional<std::vector<std::string>> fp8_layers;  // fp8: the linear layers that ran in FP8 (GPTImpl::fp8_layers)
  std::optional<double> fp8_flops_per_token;           // fp8: their FLOPs per token, which MFU counts at FP8's peak
  std::vector<StepRecord> warmup, steps;
  std::vector<PhaseTimes> phases;         // each measured step's phases (bench/phases.h), beside `steps`
  std::optional<std::string> phase_note;  // what the split merges or leaves out (compile's graph, data parallel)
  std::optional<Summary> step_ms;
  std::string stop_reason;
  double tokens_per_s = 0;
  std::optional<MemoryStats> memory;
  std::optional<Mfu> mfu;
  std::optional<MaxBatchProbe> probe;
  nlohmann::json trace;        // null unless traced
  nlohmann::json op_counts;    // null unless --count-ops: a step's ATen ops and allocations (trace/op_counts.h)
  nlohmann::json gpu_state;    // GpuState::to_json: clocks, power and throttling per phase (null: never read)
  nlohmann::json convergence;  // null unless trained to a target loss: every seed (ablations/run/result_document.h)
  int world_size = 1;          // ranks whose tokens each step counts
  nlohmann::json distributed;  // null unless data parallel: world_size, backend, buckets, per-rank medians
  std::optional<double> compile_s;  // Python compile rows: seconds of the first, compiling step
  nlohmann::json python_versions;   // Python rows: {python, torch, triton}
};

RunResult run_configuration(RunConfig config, std::shared_ptr<const Tokens> tokens, const RunHooks& hooks = {});

// The statistics of what was measured: step-time summary, tokens/s, MFU (a Python row's too).
void fill_statistics(const RunConfig& config, RunResult& result);

// The measured steps' losses, in order.
std::vector<double> losses(const RunResult& result);

}  // namespace stepwise::bench
