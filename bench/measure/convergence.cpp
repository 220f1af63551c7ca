// train_to_target: one line of training (bench/measure/seed_training.h) from step 0 until the validation loss reaches
// the target, the horizon, or a cap; and the validation loss every evaluation reads.
#include "bench/measure/convergence.h"

#include "bench/device.h"
#include "bench/interrupted.h"
#include "bench/measure/seed_training.h"
#include "bench/oom.h"
#include "bench/step/bf16.h"
#include "model/gpt.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace stepwise::bench {

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
  TrainingLine line;
  line.run.seed = config.seed;
  try {
    use_device(config.device);
    SeedTraining training(config, train, val, options, line, on_progress, interrupted);
    training.advance(line, options, std::numeric_limits<int64_t>::max());
  } catch (const Interrupted& e) {
    line.run.status = "failed";
    line.run.stop_reason = "interrupted";
    line.run.reason = e.what();
  } catch (const std::exception& e) {
    line.run.status = "failed";
    line.run.stop_reason = "failed";
    const auto what = short_message(e);
    line.run.reason = is_out_of_memory(e) && what.rfind("out of memory", 0) != 0 ? "out of memory: " + what : what;
  }
  try {
    release_cached_memory(config.device);
  } catch (const std::exception&) {
  }
  return line.run;
}

}  // namespace stepwise::bench
