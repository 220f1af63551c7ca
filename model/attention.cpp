// Causal self-attention in both layouts.
#include "model/attention.h"

#include "model/sdpa_backend.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

namespace stepwise::model {

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const GPTConfig& config) : config_(config) {
  const int64_t C = config.n_embd();
  if (config.flash()) {
    c_attn = register_module("c_attn", torch::nn::Linear(torch::nn::LinearOptions(C, 3 * C).bias(config.qkv_bias())));
  } else {
    query = register_module("query", torch::nn::Linear(torch::nn::LinearOptions(C, C).bias(config.qkv_bias())));
    key = register_module("key", torch::nn::Linear(torch::nn::LinearOptions(C, C).bias(config.qkv_bias())));
    value = register_module("value", torch::nn::Linear(torch::nn::LinearOptions(C, C).bias(config.qkv_bias())));
    if (!config.dynamic_mask()) {
      const int64_t N = config.context_length();
      mask = register_buffer("mask", at::triu(at::ones({N, N}), /*diagonal=*/1));
    }
  }
  c_proj = register_module("c_proj", torch::nn::Linear(C, C));
  attn_dropout = register_module("attn_dropout", torch::nn::Dropout(config.dropout()));
}

at::Tensor CausalSelfAttentionImpl::forward(const at::Tensor& x) {
  return config_.flash() ? forward_sdpa(x) : forward_reference(x);
}

at::Tensor CausalSelfAttentionImpl::causal_mask(int64_t T, const at::Device& device) {
  if (config_.dynamic_mask())
    return at::triu(at::ones({T, T}, at::TensorOptions().dtype(at::kBool).device(device)), /*diagonal=*/1);
  // The reference converts the whole stored buffer to bool on every forward, then slices.
  return mask.to(at::kBool).slice(0, 0, T).slice(1, 0, T);
}

at::Tensor CausalSelfAttentionImpl::forward_reference(const at::Tensor& x) {
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
  const int64_t H = config_.n_head(), D = config_.head_dim();
  auto q = query(x).view({B, T, H, D}).transpose(1, 2);  // (B, H, T, D)
  auto k = key(x).view({B, T, H, D}).transpose(1, 2);    // (B, H, T, D)
  auto v = value(x).view({B, T, H, D}).transpose(1, 2);  // (B, H, T, D)

  auto scores = at::matmul(q, k.transpose(2, 3));  // (B, H, T, T)
  scores.masked_fill_(causal_mask(T, x.device()), -std::numeric_limits<double>::infinity());
  auto weights = attn_dropout(at::softmax(scores / std::sqrt(static_cast<double>(D)), -1));
  auto y = at::matmul(weights, v).transpose(1, 2).contiguous().view({B, T, C});  // (B, T, C)
  return c_proj(y);
}

at::Tensor CausalSelfAttentionImpl::forward_sdpa(const at::Tensor& x) {
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
  const int64_t H = config_.n_head(), D = config_.head_dim();
  auto qkv = c_attn(x).view({B, T, 3, H, D}).permute({2, 0, 3, 1, 4});  // (3, B, H, T, D)
  auto q = qkv[0], k = qkv[1], v = qkv[2];

  at::Tensor y;
  {
    SdpaBackendGuard pin(config_.sdpa_backend());
    y = at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, is_training() ? config_.dropout() : 0.0,
                                         /*is_causal=*/true);  // (B, H, T, D)
  }
  return c_proj(y.transpose(1, 2).contiguous().view({B, T, C}));
}

}  // namespace stepwise::model
