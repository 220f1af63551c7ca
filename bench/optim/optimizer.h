// The optimizer the training step holds (TrainState::optimizer): AdamW in any of its implementations, ZeRO-1's sharded
// AdamW, or Muon with its AdamW for the parameters Muon does not take. The step, the CUDA-graph step and the runner
// call only this: step after the gradients are in place (reduced, under data parallel), zero_grad after it, set_lr
// before it when a schedule runs; the budget search also copies its state out and back (save_state, load_state).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace stepwise::bench {

// A copy of what an optimizer's next steps read besides the parameters, their gradients and the rate set before each
// step: its moments and momentum buffers (empty before the first step made them), its step counts.
struct OptimizerState {
  std::vector<at::Tensor> tensors;    // copies, never the optimizer's own
  std::vector<int64_t> counters;      // step counts kept on the host
  std::vector<OptimizerState> parts;  // the optimizers inside this one (Muon's Adam groups), in order
};

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
  // The state as it stands, copied, and that copy put back: the budget search trains each budget's cool-down from a
  // copy of the shared stable phase (bench/measure/budget_branches.h). An optimizer that cannot (ZeRO-1's shards live
  // on every rank) refuses by throwing std::logic_error.
  virtual OptimizerState save_state() const {
    throw std::logic_error(name() + " AdamW keeps no copy of its state: the budget search cannot branch it");
  }
  virtual void load_state(const OptimizerState&) {
    throw std::logic_error(name() + " AdamW keeps no copy of its state: the budget search cannot branch it");
  }
};

}  // namespace stepwise::bench
