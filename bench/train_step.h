// One training step: batch -> copy -> forward -> loss -> backward -> optimizer step -> zero grads.
#pragma once

#include "bench/train_state.h"

#include <ATen/core/Tensor.h>

#include <functional>

namespace stepwise::bench {

// Returns the detached loss, still on the device: reading it is left to the caller, outside the timed region.
at::Tensor train_step(TrainState& state);

// forward -> loss -> backward -> optimizer step on a batch already on the device; the part a CUDA graph captures.
// `autocast_cache` must be off under capture (cached casts would be baked into the graph).
at::Tensor forward_backward_update(TrainState& state, const at::Tensor& x, const at::Tensor& y,
                                   bool autocast_cache = true);

// The step the runner times: train_step, or a replay of the captured step when config.cuda_graph is on.
using StepFn = std::function<at::Tensor()>;
StepFn make_step(TrainState& state, const RunConfig& config);

}  // namespace stepwise::bench
