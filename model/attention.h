// Multi-head causal self-attention: the reference (separate Q/K/V, explicit masked softmax) or fused QKV + SDPA.
#pragma once

#include "model/config.h"

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

namespace stepwise::model {

struct CausalSelfAttentionImpl : torch::nn::Module {
  explicit CausalSelfAttentionImpl(const GPTConfig& config);
  at::Tensor forward(const at::Tensor& x);  // (B, T, C) -> (B, T, C)

  // Reference layout: three C -> C projections and a stored mask (unless dynamic_mask).
  torch::nn::Linear query{nullptr}, key{nullptr}, value{nullptr};
  at::Tensor mask;  // (context, context) float32 ones above the diagonal, as the reference's buffer
  // flash layout: one C -> 3C projection, rows ordered q | k | v.
  torch::nn::Linear c_attn{nullptr};
  // Output projection (with bias) in both layouts.
  torch::nn::Linear c_proj{nullptr};
  torch::nn::Dropout attn_dropout{nullptr};

 private:
  at::Tensor forward_reference(const at::Tensor& x);
  at::Tensor forward_sdpa(const at::Tensor& x);
  at::Tensor causal_mask(int64_t T, const at::Device& device);

  GPTConfig config_;
};
TORCH_MODULE(CausalSelfAttention);

}  // namespace stepwise::model
