// LayerNorm and tanh-GELU: the reference's hand-written formulas, or torch's native kernels (native_layers).
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

namespace stepwise::model {

// LayerNorm with GPT-2's epsilon; the parameters are the same in both variants, so weights carry over.
struct LayerNormImpl : torch::nn::Module {
  LayerNormImpl(int64_t dim, bool native);
  at::Tensor forward(const at::Tensor& x);  // (..., C) -> (..., C)

  at::Tensor weight;  // (C) the reference calls it `scale`
  at::Tensor bias;    // (C) the reference calls it `shift`
  int64_t dim;
  bool native;
};
TORCH_MODULE(LayerNorm);

// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); native = at::gelu(x, "tanh"), the same function.
at::Tensor gelu_tanh(const at::Tensor& x, bool native);

}  // namespace stepwise::model
