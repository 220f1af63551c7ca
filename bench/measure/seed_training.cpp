// SeedTraining: the warm-up undone, then stretches of timed steps between evaluations off the clock, with a line that
// can pause between steps and a copy of the state that puts the run back where it paused.
#include "bench/measure/seed_training.h"

#include "bench/device.h"
#include "bench/interrupted.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <numeric>
#include <stdexcept>

namespace stepwise::bench {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The parameters as they stand, copied.
std::vector<at::Tensor> weights_of(const model::GPT& model) {
  std::vector<at::Tensor> out;
  for (const auto& p : model->parameters()) out.push_back(p.detach().clone());
  return out;
}

// `weights` copied back into the parameters in place (a captured CUDA graph keeps reading the same addresses).
void copy_weights_back(const model::GPT& model, const std::vector<at::Tensor>& weights) {
  torch::NoGradGuard no_grad;
  auto params = model->parameters();
  for (size_t i = 0; i < params.size(); ++i) params[i].copy_(weights[i]);
}

at::Tensor read_generator(at::Generator gen) {
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get_state();
}

void write_generator(at::Generator gen, const at::Tensor& state) {
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(state);
}

// Where the next evaluation falls: the next multiple of K, the cap, or the step budget, which must be evaluated
// exactly (the grid of multiples of K stays as it is, so a budget does not move the steps to target).
int64_t next_evaluation(int64_t steps, const TargetOptions& options) {
  int64_t next = std::min((steps / options.eval_every + 1) * options.eval_every, options.max_steps);
  if (options.step_budget && steps < *options.step_budget) next = std::min(next, *options.step_budget);
  return next;
}

// Whether `steps` is one of the evaluations next_evaluation leads to.
bool evaluation_point(int64_t steps, const TargetOptions& options) {
  return steps % options.eval_every == 0 || steps == options.max_steps ||
         (options.step_budget && steps == *options.step_budget);
}

double mean_of(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

SeedTraining::SeedTraining(const RunConfig& config, std::shared_ptr<const Tokens> train,
                           std::shared_ptr<const Tokens> val, const TargetOptions& options, TrainingLine& line,
                           ConvergenceProgress on_progress, const std::atomic<bool>* interrupted)
    : config_(config), train_(std::move(train)), on_progress_(std::move(on_progress)), interrupted_(interrupted) {
  if (!val) throw std::runtime_error("time to a target loss needs a validation stream");
  validation_ = validation_set(*val, options.eval_batches, config.batch_size, config.seq_len, config.device);
  state_ = make_train_state(config, train_);
  const auto initial = weights_of(state_.model);
  step_ = make_step(state_, config);

  // Warm-up (allocator growth, kernel selection, compile's capture): timed apart, then undone: the initial weights
  // copied back, a fresh optimizer state, the data order from its start, and dropout's seed.
  const auto warmup_began = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < step_->warmup_steps(options.warmup_steps); ++i) (*step_)();
  synchronize(config.device);
  line.run.warmup_s = seconds_since(warmup_began);
  copy_weights_back(state_.model, initial);
  state_.optimizer = make_optimizer(config, state_.model);
  state_.optimizer_steps = 0;
  state_.loader.reset();  // its staging thread ends before the new one starts
  state_.loader = std::make_unique<Loader>(train_, config);
  torch::manual_seed(dropout_seed(config.seed));
  synchronize(config.device);

  evaluate(line, std::nullopt);
  timer_ = make_step_timer(config.device);
  // The step marks its phases on the timer's clock, as in a throughput row; never during warm-up or evaluation.
  line.run.phase_note = step_->phase_note();
  step_->time_phases(timer_.get());
}

SeedTraining::~SeedTraining() {
  if (step_) step_->time_phases(nullptr);  // the timer goes first
}

double SeedTraining::evaluate(TrainingLine& line, std::optional<double> train_loss) {
  const auto began = std::chrono::steady_clock::now();
  const double loss = validation_loss(state_, validation_);
  line.run.eval_s += seconds_since(began);
  line.run.curve.push_back(
      {line.steps, line.steps * config_.batch_size * config_.seq_len, line.timed_s, loss, train_loss});
  if (on_progress_) on_progress_(line.run);
  return loss;
}

void SeedTraining::advance(TrainingLine& line, const TargetOptions& options, int64_t until) {
  if (line.paused && !line.stopped && evaluation_point(line.steps, options)) conclude_stretch(line, options);
  auto& run = line.run;
  while (!line.stopped && line.steps < until) {
    // Host time of this stretch of steps, a bound on --max-time between evaluations.
    const auto stretch_began = std::chrono::steady_clock::now();
    const int64_t evaluation = next_evaluation(line.steps, options);
    const int64_t stretch_end = std::min(evaluation, until);
    for (int64_t i = 0; line.steps < stretch_end; ++i) {
      if (i > 0 && line.timed_s + seconds_since(stretch_began) >= options.max_time_s) break;
      // ---------------- TIMED REGION BEGIN ----------------
      timer_->start();
      at::Tensor loss = (*step_)();
      timer_->stop();
      // ---------------- TIMED REGION END ------------------
      losses_.push_back(loss);
      ++line.steps;
      if (interrupted_ && interrupted_->load()) break;
    }
    const bool cut_short = line.steps < stretch_end;  // the time cap, or asked to stop
    timer_->close_chunk(std::exchange(losses_, {}));
    const ChunkReading chunk = timer_->read_oldest();  // waits for the stretch's last step
    for (double ms : chunk.ms) {
      run.step_ms.push_back(ms);
      line.timed_s += ms / 1000.0;
    }
    run.step_losses.insert(run.step_losses.end(), chunk.losses.begin(), chunk.losses.end());
    run.step_phases.insert(run.step_phases.end(), chunk.phases.begin(), chunk.phases.end());
    auto& since = line.losses_since_evaluation;
    since.insert(since.end(), chunk.losses.begin(), chunk.losses.end());
    if (const double train_loss = mean_of(since); !std::isfinite(train_loss)) {
      run.stop_reason = "diverged";
      run.reason = "the training loss is " + std::to_string(train_loss) + " by step " + std::to_string(line.steps);
      line.stopped = true;
      return;
    }
    line.paused = !cut_short && stretch_end < evaluation;  // a branch point that is no evaluation: go on from it
    if (!line.paused) conclude_stretch(line, options);
  }
}

void SeedTraining::conclude_stretch(TrainingLine& line, const TargetOptions& options) {
  auto& run = line.run;
  line.paused = false;
  const double val_loss = evaluate(line, mean_of(line.losses_since_evaluation));
  line.losses_since_evaluation.clear();
  if (val_loss <= options.loss && !run.reached) {  // the first crossing is the time to target
    run.reached = true;
    run.stop_reason = "target";
    run.steps = line.steps;
    run.tokens = line.steps * config_.batch_size * config_.seq_len;
    run.time_s = line.timed_s;
  }
  // With a step budget (the declared horizon) every seed trains to exactly the budget, on past the target, as a
  // record trains all its N steps; one that has not crossed by then is censored there. Without one, the first
  // crossing ends the seed.
  if (options.step_budget) {
    if (line.steps >= *options.step_budget) {
      if (!run.reached) run.stop_reason = "step_budget";
      line.stopped = true;
      return;
    }
  } else if (run.reached) {
    line.stopped = true;
    return;
  }
  if (interrupted_ && interrupted_->load())
    throw Interrupted("interrupted after " + std::to_string(line.steps) + " steps");
  if (line.steps >= options.max_steps || line.timed_s >= options.max_time_s) {
    if (!run.reached) run.stop_reason = line.steps >= options.max_steps ? "max_steps" : "max_time";
    line.stopped = true;
  }
}

TrainingCopy SeedTraining::copy() const {
  TrainingCopy c;
  c.weights = weights_of(state_.model);
  c.optimizer = state_.optimizer->save_state();
  c.optimizer_steps = state_.optimizer_steps;
  c.batches_taken = state_.loader->taken();
  c.cpu_generator = read_generator(at::detail::getDefaultCPUGenerator());
  if (config_.device.is_cuda())
    c.device_generator = read_generator(at::globalContext().defaultGenerator(config_.device));
  return c;
}

void SeedTraining::put_back(const TrainingCopy& c) {
  synchronize(config_.device);
  copy_weights_back(state_.model, c.weights);
  state_.optimizer->load_state(c.optimizer);
  state_.optimizer_steps = c.optimizer_steps;
  state_.loader.reset();  // its staging thread, already ahead of the pause, ends first
  state_.loader = std::make_unique<Loader>(train_, config_, 0, 1, c.batches_taken);
  write_generator(at::detail::getDefaultCPUGenerator(), c.cpu_generator);
  if (c.device_generator.defined())
    write_generator(at::globalContext().defaultGenerator(config_.device), c.device_generator);
  synchronize(config_.device);
}

}  // namespace stepwise::bench
