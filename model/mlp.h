// The position-wise feed-forward network: C -> 4C -> tanh-GELU -> C.
#pragma once

#include "model/config.h"

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

namespace stepwise::model {

struct MLPImpl : torch::nn::Module {
  explicit MLPImpl(const GPTConfig& config);
  at::Tensor forward(const at::Tensor& x);  // (B, T, C) -> (B, T, C)

  torch::nn::Linear c_fc{nullptr};    // C -> 4C
  torch::nn::Linear c_proj{nullptr};  // 4C -> C
  bool native_gelu;
};
TORCH_MODULE(MLP);

}  // namespace stepwise::model
