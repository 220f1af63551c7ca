// One seed trained toward a target loss as a line that can be paused, copied and continued: the state built, warmed
// up and the warm-up undone, then trained stretch by stretch with the clock around each step and an evaluation off
// the clock at every K steps. train_to_target (bench/measure/convergence.h) drives one line from step 0 to the target
// or the horizon; the budget search (bench/measure/budget_branches.h) pauses the line where each budget's cool-down
// leaves the longest budget's schedule, trains a copy of it down to that budget, and puts the copy's state back.
#pragma once

#include "bench/measure/convergence.h"
#include "bench/optim/optimizer.h"
#include "bench/run_config.h"
#include "bench/step/train_state.h"
#include "bench/step/train_step.h"
#include "bench/step_timer.h"
#include "bench/tokens.h"

#include <ATen/core/Tensor.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace stepwise::bench {

// Where one line of training stands: what it has recorded (curve, steps' times and losses), its steps and timed
// seconds, and whether it has stopped (the horizon, the target without one, a cap, a diverged loss).
struct TrainingLine {
  SeedRun run;
  int64_t steps = 0;
  double timed_s = 0;
  bool stopped = false;
  bool paused = false;                          // between steps, with no evaluation at this step
  std::vector<double> losses_since_evaluation;  // the training losses an evaluation's train_loss averages
};

// Everything the next step reads, copied at a pause: the weights, the optimizer's state, the schedule's step, the
// batches of the seed's order already taken, dropout's generators. Put back, the run goes on as if never paused.
struct TrainingCopy {
  std::vector<at::Tensor> weights;
  OptimizerState optimizer;
  int64_t optimizer_steps = 0;
  int64_t batches_taken = 0;
  at::Tensor cpu_generator, device_generator;  // the device's undefined on a CPU
};

class SeedTraining {
 public:
  // Builds config's state (its seed), runs the warm-up and undoes it (weights, optimizer, data order, dropout), and
  // evaluates the untrained model into `line`. Throws what building or the warm-up throws; the caller records it.
  SeedTraining(const RunConfig& config, std::shared_ptr<const Tokens> train, std::shared_ptr<const Tokens> val,
               const TargetOptions& options, TrainingLine& line, ConvergenceProgress on_progress,
               const std::atomic<bool>* interrupted);
  ~SeedTraining();
  SeedTraining(const SeedTraining&) = delete;
  SeedTraining& operator=(const SeedTraining&) = delete;

  // Trains `line` on toward step `until`: an evaluation at every multiple of options.eval_every, at options.max_steps
  // and at options.step_budget (the horizon), and a pause without one at `until` otherwise (a pause that is one of
  // these options' evaluation points, a constant rate's budget, is evaluated first). The line stops at the horizon,
  // at the first crossing of options.loss when there is none, at --max-steps or --max-time, or where the training
  // loss is no longer finite. Throws Interrupted when asked to stop.
  void advance(TrainingLine& line, const TargetOptions& options, int64_t until);

  // The state at this pause, copied; and a copy put back (in place: a captured graph keeps its addresses).
  TrainingCopy copy() const;
  void put_back(const TrainingCopy& copy);
  // The schedule's length from now on (LrSchedule::decay_steps): a branch's cool-down ends at its own budget.
  void set_schedule_steps(int64_t n) { state_.lr_schedule.decay_steps = n; }

 private:
  double evaluate(TrainingLine& line, std::optional<double> train_loss);
  // The evaluation that ends a stretch, and what follows from it: the first crossing, the horizon, the caps.
  void conclude_stretch(TrainingLine& line, const TargetOptions& options);

  RunConfig config_;
  std::shared_ptr<const Tokens> train_;
  ValidationSet validation_;
  TrainState state_;
  std::unique_ptr<Step> step_;
  std::unique_ptr<StepTimer> timer_;
  ConvergenceProgress on_progress_;
  const std::atomic<bool>* interrupted_;
  std::vector<at::Tensor> losses_;  // the stretch's, on the device until its chunk is read
};

}  // namespace stepwise::bench
