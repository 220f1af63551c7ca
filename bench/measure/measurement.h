// The measured phases of one configuration, split as nvbench splits its measurement: the warm-up, a chunk of timed
// steps, the stop rule between chunks, and the record they leave in the result. The step (bench/step/train_step.h)
// says what its kind needs, the ranks (bench/measure/ranks.h) how they agree; nothing here asks which kind it holds.
#pragma once

#include "bench/measure/gpu_state.h"
#include "bench/measure/ranks.h"
#include "bench/measure/runner.h"
#include "bench/step/train_step.h"
#include "bench/step_timer.h"

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

namespace stepwise::bench {

// A non-finite loss ends the configuration: recorded as failed, with the steps it had.
struct NonFiniteLoss : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Measurement {
 public:
  // Hands the step timer to the step for its phase marks, which the destructor takes back.
  Measurement(const RunConfig& config, Step& step, Ranks& ranks, const RunHooks& hooks, RunResult& result);
  ~Measurement();
  Measurement(const Measurement&) = delete;
  Measurement& operator=(const Measurement&) = delete;

  // Allocator growth, cuBLAS/cuDNN heuristics, first-touch paging: recorded in result.warmup, never summarised.
  // Bounded by --max-time like the measured steps, though never below the steps this kind of step needs (compile
  // captures inside it).
  void warm_up();
  // Chunks of timed steps until the stop rule says so: result.steps and result.stop_reason.
  void measure_steps();

  // This rank's measured times, in order (ms).
  const std::vector<double>& times() const { return times_; }
  // Whether the peak-memory window opened at the measured steps (else it covers the whole process).
  bool windowed() const { return windowed_; }

 private:
  // Queues up to a chunk of timed steps; returns how many. Reading them back is left to the caller.
  size_t run_chunk(std::chrono::steady_clock::time_point began, size_t queued);
  // What the ranks decide after a chunk was read: stop (with why), interrupt, or go on.
  std::optional<StopReason> stop_rule(std::chrono::steady_clock::time_point began);
  void absorb(const ChunkReading& chunk);
  void mark(const char* phase, bool start);
  bool interrupted() const;

  const RunConfig& config_;
  Step& step_;
  Ranks& ranks_;
  const RunHooks& hooks_;
  RunResult& result_;
  TimingOptions timing_;
  std::unique_ptr<StepTimer> timer_;
  GpuState gpu_;
  Progress progress_;
  std::vector<at::Tensor> losses_;  // the current chunk's, on the device
  std::vector<double> times_;       // read back so far
  bool windowed_ = false;
};

}  // namespace stepwise::bench
