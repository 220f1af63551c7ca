// One training step: batch -> copy -> forward -> loss -> backward -> optimizer step -> zero grads.
#pragma once

#include "bench/train_state.h"

#include <ATen/core/Tensor.h>

#include <functional>

namespace stepwise::bench {

// Returns the detached loss, still on the device: reading it is left to the caller, outside the timed region.
at::Tensor train_step(TrainState& state);

// forward -> loss -> backward (and, data parallel, the gradient all-reduce) on a batch already on the device: the
// part compile's CUDA graph captures, as torch.compile(model) compiles the model and leaves the optimizer eager.
// `autocast_cache` must be off under capture (cached casts would be baked into the graph).
at::Tensor forward_backward(TrainState& state, const at::Tensor& x, const at::Tensor& y, bool autocast_cache = true);

// The step the runner times: train_step, or with compile the captured forward/backward's replay (bench/compile.h).
using StepFn = std::function<at::Tensor()>;
StepFn make_step(TrainState& state, const RunConfig& config);

}  // namespace stepwise::bench
