// The feed-forward network.
#include "model/mlp.h"

#include "model/layers.h"

namespace stepwise::model {

namespace {
// GPT-2's hidden width is four times the model width.
constexpr int64_t kMlpExpansion = 4;
}  // namespace

MLPImpl::MLPImpl(const GPTConfig& config) : native_gelu(config.native_layers()) {
  const int64_t C = config.n_embd();
  c_fc = register_module("c_fc", torch::nn::Linear(C, kMlpExpansion * C));
  c_proj = register_module("c_proj", torch::nn::Linear(kMlpExpansion * C, C));
}

at::Tensor MLPImpl::forward(const at::Tensor& x) {
  return c_proj(gelu_tanh(c_fc(x), native_gelu));  // (B, T, 4C) inside
}

}  // namespace stepwise::model
