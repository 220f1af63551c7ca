// The GPT model.
#include "model/gpt.h"

#include <ATen/ATen.h>

#include <stdexcept>
#include <string>

namespace stepwise::model {

GPTImpl::GPTImpl(const GPTConfig& config) : config_(config) {
  config.validate();
  const int64_t C = config.n_embd();
  wte = register_module("wte", torch::nn::Embedding(config.padded_vocab_size(), C));
  wpe = register_module("wpe", torch::nn::Embedding(config.context_length(), C));
  drop = register_module("drop", torch::nn::Dropout(config.dropout()));
  h = register_module("h", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.n_layer(); ++i) h->push_back(Block(config));
  ln_f = register_module("ln_f", LayerNorm(C, config.native_layers()));
  lm_head = register_module("lm_head",
                            torch::nn::Linear(torch::nn::LinearOptions(C, config.padded_vocab_size()).bias(false)));
}

at::Tensor GPTImpl::forward(const at::Tensor& idx) {
  const int64_t T = idx.size(1);
  if (T > config_.context_length())
    throw std::invalid_argument("sequence length " + std::to_string(T) + " exceeds the model's context length " +
                                std::to_string(config_.context_length()));
  auto pos = at::arange(T, at::TensorOptions().dtype(at::kLong).device(idx.device()));  // (T)
  auto x = drop(wte(idx) + wpe(pos));                                                 // (B, T, C)
  for (const auto& block : *h) x = block->as<Block>()->forward(x);
  return lm_head(ln_f(x));  // (B, T, padded_vocab)
}

int64_t GPTImpl::parameter_count() const {
  int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();
  return n;
}

}  // namespace stepwise::model
