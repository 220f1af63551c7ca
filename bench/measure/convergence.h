// Time to a target loss: one seed of a configuration trained from its initial weights until the validation loss,
// evaluated every K steps on a fixed set of held-out tokens, reaches the target, or a step or time cap says it did
// not. The clock runs only around training steps: evaluation, warm-up and compile's capture are timed apart.
#pragma once

#include "bench/measure/runner.h"
#include "bench/phases.h"
#include "bench/run_config.h"
#include "bench/step/train_state.h"
#include "bench/tokens.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stepwise::bench {

// One evaluation: where training stood and the validation loss there.
struct EvalPoint {
  int64_t step = 0;                  // training steps done
  int64_t tokens = 0;                // training tokens seen
  double time_s = 0;                 // timed training seconds so far (evaluation excluded)
  double val_loss = 0;               // mean over the validation batches
  std::optional<double> train_loss;  // mean training loss over the steps since the previous evaluation
};

struct SeedRun {
  uint64_t seed = 0;
  std::string status = "ok";  // "ok" (reached or not) or "failed"
  std::optional<std::string> reason;
  // "target" (crossed it, and with a step budget trained on to the budget), "step_budget" (trained to the budget
  // without crossing: censored there), "max_steps", "max_time", "diverged", "interrupted", "failed"
  std::string stop_reason;
  bool reached = false;
  std::optional<int64_t> steps, tokens;   // to the first evaluation at or below the target
  std::optional<double> time_s;           // timed training seconds to that evaluation
  double warmup_s = 0;                    // the warm-up steps (and compile's capture), undone after
  double eval_s = 0;                      // every evaluation, off the clock
  std::vector<EvalPoint> curve;           // from the untrained model (step 0) on
  std::vector<double> step_ms;            // every timed training step
  std::vector<double> step_losses;        // its training loss
  std::vector<PhaseTimes> step_phases;    // its phases (bench/phases.h), as the throughput rows split theirs
  std::optional<std::string> phase_note;  // what the split merges or leaves out (compile's one graph)
};

// Progress after each evaluation (the progress line: step, loss, elapsed, an estimate of the time to the target).
using ConvergenceProgress = std::function<void(const SeedRun&)>;

// Trains `config` (its seed) on `train` until options.loss, evaluating on the first eval_batches x batch_size windows
// of `val`. Never throws for the run's own failures (out of memory, a non-finite loss): they come back in the result.
SeedRun train_to_target(const RunConfig& config, const std::shared_ptr<const Tokens>& train,
                        const std::shared_ptr<const Tokens>& val, const TargetOptions& options,
                        const ConvergenceProgress& on_progress = nullptr,
                        const std::atomic<bool>* interrupted = nullptr);

// The validation loss of `model` on fixed batches: eval mode (no dropout), no gradients, the run's autocast.
struct ValidationSet {
  std::vector<at::Tensor> x, y;  // (B, T) each, on the device
};
ValidationSet validation_set(const Tokens& val, int64_t batches, int64_t batch_size, int64_t seq_len,
                             const c10::Device& device);
// The mean loss over the set: eval mode (no dropout), no gradients, the run's autocast, in float32; one host sync.
double validation_loss(TrainState& state, const ValidationSet& set);

}  // namespace stepwise::bench
