// One training step: batch -> copy -> forward -> loss -> backward -> optimizer step -> zero grads.
#pragma once

#include "bench/train_state.h"

#include <ATen/core/Tensor.h>

namespace stepwise::bench {

// Returns the detached loss, still on the device: reading it is left to the caller, outside the timed region.
at::Tensor train_step(TrainState& state);

}  // namespace stepwise::bench
