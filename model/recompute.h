// The checkpoint flag's two modes on torch::autograd::Function (LibTorch has no torch.utils.checkpoint): `full`
// keeps only a block's input and runs the block again in the backward; `selective` (llm.c's -r 2) recomputes a
// LayerNorm or the GELU from its input and runs the next matmul's backward on the recomputed values, so no matmul
// runs twice.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/modules/linear.h>

#include <functional>
#include <vector>

namespace stepwise::model {

using TensorFn = std::function<at::Tensor(const at::Tensor&)>;

// fn(x) with none of its activations kept: x is saved, and the backward runs fn on it again with the forward's
// autocast state and, when `preserve_rng` (fn draws dropout masks), the forward's generator states (the CPU's and
// the device's), so every mask is drawn again exactly; the generators are restored afterwards. This is
// torch.utils.checkpoint(fn, x, use_reentrant=True, preserve_rng_state=True), which the Python model runs, op for op.
// Inside a CUDA graph capture the device's generator is kept by its offset within the graph (model/generator_states.h).
at::Tensor checkpointed(const TensorFn& fn, const at::Tensor& x, bool preserve_rng);

// [at::linear(f(x), W, b) for each of `layers`], f's output and activations never kept: x and the weights are saved;
// the backward recomputes f(x) under the forward's autocast state and runs each linear's backward on it as autograd
// differentiates at::linear (the addmm on the 2-D view), then backpropagates through f. f must draw no random number
// (a LayerNorm, the GELU); its own parameters accumulate their gradients directly, as in checkpointed().
std::vector<at::Tensor> linears_of_recomputed(const TensorFn& f, const at::Tensor& x,
                                              const std::vector<torch::nn::Linear>& layers);

}  // namespace stepwise::model
