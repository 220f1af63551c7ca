// train_to_target: warm up and undo it, then train with the clock around each step and evaluate every K steps off the
// clock, until the validation loss reaches the target or a cap stops the seed.
#include "bench/measure/convergence.h"

#include "bench/device.h"
#include "bench/interrupted.h"
#include "bench/oom.h"
#include "bench/step/bf16.h"
#include "bench/step/train_state.h"
#include "bench/step/train_step.h"
#include "bench/step_timer.h"
#include "model/gpt.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace stepwise::bench {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The parameters as they were built, to undo the warm-up.
std::vector<at::Tensor> snapshot(const model::GPT& model) {
  std::vector<at::Tensor> out;
  for (const auto& p : model->parameters()) out.push_back(p.detach().clone());
  return out;
}

// Undoes the warm-up: the initial weights copied back in place (a captured CUDA graph keeps reading the same
// addresses), a fresh optimizer state, the data order from its start, and dropout's seed.
void restore(TrainState& state, const std::vector<at::Tensor>& initial, const RunConfig& config,
             const std::shared_ptr<const Tokens>& train) {
  synchronize(config.device);
  {
    torch::NoGradGuard no_grad;
    auto params = state.model->parameters();
    for (size_t i = 0; i < params.size(); ++i) params[i].copy_(initial[i]);
  }
  state.optimizer = make_optimizer(config, state.model);
  state.optimizer_steps = 0;
  state.loader.reset();  // its staging thread ends before the new one starts
  state.loader = std::make_unique<Loader>(train, config);
  torch::manual_seed(dropout_seed(config.seed));
  synchronize(config.device);
}

// Where the next evaluation falls: the next multiple of K, the cap, or the step budget, which must be evaluated
// exactly (the grid of multiples of K stays as it is, so a budget does not move the steps to target).
int64_t next_evaluation(int64_t steps, const TargetOptions& options) {
  int64_t next = std::min((steps / options.eval_every + 1) * options.eval_every, options.max_steps);
  if (options.step_budget && steps < *options.step_budget) next = std::min(next, *options.step_budget);
  return next;
}

double mean_of(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

double validation_loss(TrainState& state, const ValidationSet& set) {
  torch::NoGradGuard no_grad;
  state.model->eval();  // no dropout
  at::Tensor total;
  {
    AutocastGuard autocast(state.device.type(), state.bf16_autocast);
    for (size_t i = 0; i < set.x.size(); ++i) {
      // In float32 whatever the model computes in: pure bf16 would round the loss itself to 8 bits.
      auto loss = model::cross_entropy(state.model->forward(set.x[i]).to(at::kFloat), set.y[i]);
      total = total.defined() ? total + loss : loss;
    }
  }
  state.model->train();
  return total.item<double>() / static_cast<double>(set.x.size());  // the evaluation's one host sync
}

ValidationSet validation_set(const Tokens& val, int64_t batches, int64_t batch_size, int64_t seq_len,
                             const c10::Device& device) {
  const auto T = static_cast<size_t>(seq_len), B = static_cast<size_t>(batch_size);
  const size_t windows = val.size() > T ? (val.size() - 1) / T : 0;
  if (windows < B)
    throw std::runtime_error("the validation stream holds " + std::to_string(windows) + " windows of " +
                             std::to_string(seq_len + 1) + " tokens, fewer than one batch of " +
                             std::to_string(batch_size) + " (give --val-data, or more data)");
  ValidationSet set;
  const auto count = std::min<size_t>(static_cast<size_t>(batches), windows / B);
  for (size_t b = 0; b < count; ++b) {
    auto x = at::empty({batch_size, seq_len}, at::kLong), y = at::empty({batch_size, seq_len}, at::kLong);
    auto* xs = x.data_ptr<int64_t>();
    auto* ys = y.data_ptr<int64_t>();
    for (size_t row = 0; row < B; ++row) {
      const size_t start = (b * B + row) * T;  // consecutive windows, in order: the same ones for every run
      for (size_t t = 0; t < T; ++t) {
        xs[row * T + t] = val[start + t];
        ys[row * T + t] = val[start + t + 1];
      }
    }
    set.x.push_back(x.to(device));
    set.y.push_back(y.to(device));
  }
  return set;
}

SeedRun train_to_target(const RunConfig& config, const std::shared_ptr<const Tokens>& train,
                        const std::shared_ptr<const Tokens>& val, const TargetOptions& options,
                        const ConvergenceProgress& on_progress, const std::atomic<bool>* interrupted) {
  SeedRun run;
  run.seed = config.seed;
  try {
    use_device(config.device);
    if (!val) throw std::runtime_error("time to a target loss needs a validation stream");
    const auto validation =
        validation_set(*val, options.eval_batches, config.batch_size, config.seq_len, config.device);
    TrainState state = make_train_state(config, train);
    const auto initial = snapshot(state.model);
    const auto step = make_step(state, config);

    // Warm-up (allocator growth, kernel selection, compile's capture): timed apart, then undone.
    const auto warmup_began = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < step->warmup_steps(options.warmup_steps); ++i) (*step)();
    synchronize(config.device);
    run.warmup_s = seconds_since(warmup_began);
    restore(state, initial, config, train);

    auto evaluate = [&](int64_t steps, double time_s, std::optional<double> train_loss) {
      const auto began = std::chrono::steady_clock::now();
      const double loss = validation_loss(state, validation);
      run.eval_s += seconds_since(began);
      run.curve.push_back({steps, steps * config.batch_size * config.seq_len, time_s, loss, train_loss});
      if (on_progress) on_progress(run);
      return loss;
    };
    evaluate(0, 0, std::nullopt);

    const auto timer = make_step_timer(config.device);
    // The step marks its phases on the timer's clock, as in a throughput row; never during warm-up or evaluation.
    run.phase_note = step->phase_note();
    step->time_phases(timer.get());
    std::vector<at::Tensor> losses;
    int64_t steps = 0;
    double timed_s = 0;
    while (true) {
      // Host time of this stretch of steps, a bound on --max-time between evaluations.
      const auto stretch_began = std::chrono::steady_clock::now();
      const int64_t stretch_end = next_evaluation(steps, options);
      for (int64_t i = 0; steps < stretch_end; ++i) {
        if (i > 0 && timed_s + seconds_since(stretch_began) >= options.max_time_s) break;
        // ---------------- TIMED REGION BEGIN ----------------
        timer->start();
        at::Tensor loss = (*step)();
        timer->stop();
        // ---------------- TIMED REGION END ------------------
        losses.push_back(loss);
        ++steps;
        if (interrupted && interrupted->load()) break;
      }
      timer->close_chunk(std::exchange(losses, {}));
      const ChunkReading chunk = timer->read_oldest();  // waits for the stretch's last step
      for (double ms : chunk.ms) {
        run.step_ms.push_back(ms);
        timed_s += ms / 1000.0;
      }
      run.step_losses.insert(run.step_losses.end(), chunk.losses.begin(), chunk.losses.end());
      run.step_phases.insert(run.step_phases.end(), chunk.phases.begin(), chunk.phases.end());
      const double train_loss = mean_of(chunk.losses);
      if (!std::isfinite(train_loss)) {
        run.stop_reason = "diverged";
        run.reason = "the training loss is " + std::to_string(train_loss) + " by step " + std::to_string(steps);
        break;
      }
      const double val_loss = evaluate(steps, timed_s, train_loss);
      if (val_loss <= options.loss && !run.reached) {  // the first crossing is the time to target
        run.reached = true;
        run.stop_reason = "target";
        run.steps = steps;
        run.tokens = steps * config.batch_size * config.seq_len;
        run.time_s = timed_s;
      }
      // With a step budget (the declared horizon) every seed trains to exactly the budget, on past the target, as a
      // record trains all its N steps; one that has not crossed by then is censored there. Without one, the first
      // crossing ends the seed.
      if (options.step_budget) {
        if (steps >= *options.step_budget) {
          if (!run.reached) run.stop_reason = "step_budget";
          break;
        }
      } else if (run.reached) {
        break;
      }
      if (interrupted && interrupted->load())
        throw Interrupted("interrupted after " + std::to_string(steps) + " steps");
      if (steps >= options.max_steps) {
        if (!run.reached) run.stop_reason = "max_steps";
        break;
      }
      if (timed_s >= options.max_time_s) {
        if (!run.reached) run.stop_reason = "max_time";
        break;
      }
    }
    step->time_phases(nullptr);  // the timer goes first
  } catch (const Interrupted& e) {
    run.status = "failed";
    run.stop_reason = "interrupted";
    run.reason = e.what();
  } catch (const std::exception& e) {
    run.status = "failed";
    run.stop_reason = "failed";
    const auto what = short_message(e);
    run.reason = is_out_of_memory(e) && what.rfind("out of memory", 0) != 0 ? "out of memory: " + what : what;
  }
  try {
    release_cached_memory(config.device);
  } catch (const std::exception&) {
  }
  return run;
}

}  // namespace stepwise::bench
