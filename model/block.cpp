// The transformer block.
#include "model/block.h"

namespace stepwise::model {

BlockImpl::BlockImpl(const GPTConfig& config) {
  ln_1 = register_module("ln_1", LayerNorm(config.n_embd(), config.native_layers()));
  attn = register_module("attn", CausalSelfAttention(config));
  ln_2 = register_module("ln_2", LayerNorm(config.n_embd(), config.native_layers()));
  mlp = register_module("mlp", MLP(config));
  resid_dropout = register_module("resid_dropout", torch::nn::Dropout(config.dropout()));
}

at::Tensor BlockImpl::forward(const at::Tensor& x) {
  auto h = x + resid_dropout(attn(ln_1(x)));
  return h + resid_dropout(mlp(ln_2(h)));
}

}  // namespace stepwise::model
