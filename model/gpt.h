// GPT: token + learned position embeddings, pre-LN blocks, final LayerNorm, untied output head.
#pragma once

#include "model/block.h"
#include "model/config.h"
#include "model/layers.h"

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

namespace stepwise::model {

struct GPTImpl : torch::nn::Module {
  // Validates the config (std::invalid_argument) and initialises with PyTorch's defaults from the global seed.
  explicit GPTImpl(const GPTConfig& config);
  // idx (B, T) int64 token ids -> logits (B, T, padded_vocab_size); throws if T exceeds the context.
  at::Tensor forward(const at::Tensor& idx);

  const GPTConfig& config() const { return config_; }
  int64_t parameter_count() const;

  torch::nn::Embedding wte{nullptr};  // (padded_vocab, C)
  torch::nn::Embedding wpe{nullptr};  // (context, C)
  torch::nn::Dropout drop{nullptr};
  torch::nn::ModuleList h{nullptr};  // n_layer x Block
  LayerNorm ln_f{nullptr};
  torch::nn::Linear lm_head{nullptr};  // C -> padded_vocab, no bias, not tied to wte (as the reference)

 private:
  GPTConfig config_;
};
TORCH_MODULE(GPT);

}  // namespace stepwise::model
