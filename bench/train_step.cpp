// The step everything is measured on; it reads top to bottom and contains no host synchronisation of its own.
#include "bench/train_step.h"

#include "bench/precision.h"
#include "model/loss.h"

namespace stepwise::bench {

at::Tensor train_step(TrainState& state) {
  DeviceBatch batch = state.loader->next();  // staged by the loader thread; copied per the copy mode

  at::Tensor loss;
  {
    AutocastGuard autocast(state.device.type(), state.autocast);  // no-op unless bf16 autocast
    at::Tensor logits = state.model->forward(batch.x);              // (B, T, V)
    loss = model::cross_entropy(logits, batch.y);                   // scalar
  }
  loss.backward();

  state.optimizer->step();
  state.optimizer->zero_grad();
  return loss.detach();
}

}  // namespace stepwise::bench
