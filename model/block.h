// A pre-LN transformer block: x + drop(attn(ln_1(x))), then x + drop(mlp(ln_2(x))).
#pragma once

#include "model/attention.h"
#include "model/config.h"
#include "model/layers.h"
#include "model/mlp.h"

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/pimpl.h>

namespace stepwise::model {

struct BlockImpl : torch::nn::Module {
  explicit BlockImpl(const GPTConfig& config);
  at::Tensor forward(const at::Tensor& x);  // (B, T, C) -> (B, T, C)

  LayerNorm ln_1{nullptr};
  CausalSelfAttention attn{nullptr};
  LayerNorm ln_2{nullptr};
  MLP mlp{nullptr};
  torch::nn::Dropout resid_dropout{nullptr};  // the reference's drop_shortcut, applied after attn and after mlp
};
TORCH_MODULE(Block);

}  // namespace stepwise::model
