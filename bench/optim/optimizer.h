// The optimizer the training step holds (TrainState::optimizer): AdamW in any of its implementations, ZeRO-1's sharded
// AdamW, or Muon with its AdamW for the parameters Muon does not take. The step, the CUDA-graph step and the runner
// call only this: step after the gradients are in place (reduced, under data parallel), zero_grad after it, set_lr
// before it when a schedule runs.
#pragma once

#include <cstdint>
#include <string>

namespace stepwise::bench {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual void step() = 0;
  // Sets gradients to none, as torch.optim's default zero_grad(set_to_none=True).
  virtual void zero_grad() = 0;
  // The learning rate of the next steps, as the schedule computes it from the AdamW base rate (bench/step/
  // lr_schedule.h); an optimizer with groups of other base rates scales each by the same factor. Set on the host
  // before each step: no device work.
  virtual void set_lr(double lr) = 0;
  // The AdamW implementation that runs ("forloop", "foreach", "fused" or "reference"): the name results record.
  virtual std::string name() const = 0;
  // The bytes of state it holds once it has stepped (moments, momentum buffers, step counts), on this rank: what the
  // memory split counts as optimizer state.
  virtual int64_t state_bytes() const = 0;
};

}  // namespace stepwise::bench
