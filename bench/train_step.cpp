// The step everything is measured on, top to bottom: batch -> copy -> forward -> loss -> backward -> optimizer. It
// holds no host synchronisation of its own; the runner puts the events around it.
#include "bench/train_step.h"

#include "bench/bf16.h"
#include "bench/compile.h"
#include "model/gpt.h"

#include <memory>

namespace stepwise::bench {

at::Tensor forward_backward(TrainState& state, const at::Tensor& x, const at::Tensor& y, bool autocast_cache) {
  at::Tensor loss;
  {
    AutocastGuard autocast(state.device.type(), state.bf16_autocast, c10::kBFloat16, autocast_cache);
    at::Tensor logits = state.model->forward(x);  // (B, T, V)
    loss = model::cross_entropy(logits, y);       // scalar
  }
  loss.backward();
  if (state.grad_sync) state.grad_sync->finish();  // data parallel: wait for the bucketed all-reduces
  return loss.detach();
}

at::Tensor train_step(TrainState& state) {
  DeviceBatch batch = state.loader->next();  // staged by the loader thread; pinned and async with pinned_memory
  at::Tensor loss = forward_backward(state, batch.x, batch.y);
  state.optimizer->step();
  state.optimizer->zero_grad();
  return loss;
}

StepFn make_step(TrainState& state, const RunConfig& config) {
  if (!config.compile) return [&state] { return train_step(state); };
  auto graphed = std::make_shared<CudaGraphStep>(state);
  return [graphed] { return (*graphed)(); };
}

}  // namespace stepwise::bench
