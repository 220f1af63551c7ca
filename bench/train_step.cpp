// The step everything is measured on; it reads top to bottom and contains no host synchronisation of its own.
#include "bench/train_step.h"

#include "bench/cuda_graph_step.h"
#include "bench/precision.h"
#include "model/loss.h"

#include <memory>

namespace stepwise::bench {

at::Tensor forward_backward(TrainState& state, const at::Tensor& x, const at::Tensor& y, bool autocast_cache) {
  at::Tensor loss;
  {
    AutocastGuard autocast(state.device.type(), state.autocast, c10::kBFloat16, autocast_cache);  // bf16 autocast only
    at::Tensor logits = state.model->forward(x);  // (B, T, V)
    loss = model::cross_entropy(logits, y);       // scalar
  }
  loss.backward();
  if (state.grad_sync) state.grad_sync->finish();  // data parallel: wait for the bucketed all-reduces
  return loss.detach();
}

at::Tensor train_step(TrainState& state) {
  DeviceBatch batch = state.loader->next();  // staged by the loader thread; copied per the copy mode
  at::Tensor loss = forward_backward(state, batch.x, batch.y);
  state.optimizer->step();
  state.optimizer->zero_grad();
  return loss;
}

StepFn make_step(TrainState& state, const RunConfig& config) {
  if (!config.cuda_graph) return [&state] { return train_step(state); };
  auto graphed = std::make_shared<CudaGraphStep>(state);
  return [graphed] { return (*graphed)(); };
}

}  // namespace stepwise::bench
