// The shared GPT, from embedding to loss, in the module tree of Raschka's 00_orig.py with GPT-2's names. Each flag
// of GPTConfig (dynamic_mask, native_layers, flash, vocab_padding, checkpoint, chunked_ce, fp8, and the speedrun's
// rotary, qk_norm, relu2, zero_init_proj, logit_softcap) is a visible branch of model/gpt.cpp, so one file shows a
// forward pass and everything a flag changes in it.
#pragma once

#include "model/config.h"

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <string>
#include <utility>
#include <vector>

namespace stepwise::model {

// LayerNorm with GPT-2's epsilon: the hand-written formula, or at::layer_norm with native_layers. The parameters are
// the same in both, so weights carry over.
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

// Multi-head causal self-attention: the reference (separate Q/K/V, explicit masked softmax) or, with flash, one
// fused QKV projection and scaled_dot_product_attention. In both, qk_norm and rotary act on q and k between the
// projection and the attention (position_qk()).
struct CausalSelfAttentionImpl : torch::nn::Module {
  explicit CausalSelfAttentionImpl(const GPTConfig& config);
  at::Tensor forward(const at::Tensor& x);  // (B, T, C) -> (B, T, C)
  // The input projections, in the order forward() applies them: query, key, value, or c_attn with flash.
  std::vector<torch::nn::Linear> projections() const;
  // forward() from the projections' outputs (each (B, T, C), or (B, T, 3C) with flash): checkpoint's selective mode
  // computes them itself.
  at::Tensor forward_projected(const std::vector<at::Tensor>& projected);
  // q and k (B, H, T, D) as attention takes them: RMS-normalised per head with qk_norm, then rotated with rotary (the
  // order is immaterial: a rotation keeps the RMS).
  std::pair<at::Tensor, at::Tensor> position_qk(const at::Tensor& q, const at::Tensor& k) const;

  // Reference layout: three C -> C projections and a stored mask (unless dynamic_mask).
  torch::nn::Linear query{nullptr}, key{nullptr}, value{nullptr};
  at::Tensor mask;  // (context, context) float32 ones above the diagonal, as the reference's buffer
  // flash layout: one C -> 3C projection, rows ordered q | k | v.
  torch::nn::Linear c_attn{nullptr};
  // Output projection (with bias) in both layouts.
  torch::nn::Linear c_proj{nullptr};
  torch::nn::Dropout attn_dropout{nullptr};

 private:
  at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);  // (B, H, T, D) each
  at::Tensor attend_fused(const at::Tensor& qkv);                                    // (B, T, 3C)
  GPTConfig config_;
};
TORCH_MODULE(CausalSelfAttention);

// The position-wise feed-forward network: C -> 4C -> tanh-GELU (relu^2 with relu2) -> C.
struct MLPImpl : torch::nn::Module {
  explicit MLPImpl(const GPTConfig& config);
  at::Tensor forward(const at::Tensor& x);  // (B, T, C) -> (B, T, C)
  // The nonlinearity between c_fc and c_proj, (B, T, 4C): checkpoint's selective mode recomputes it.
  at::Tensor activation(const at::Tensor& hidden) const;

  torch::nn::Linear c_fc{nullptr};    // C -> 4C
  torch::nn::Linear c_proj{nullptr};  // 4C -> C
  bool native_gelu;

 private:
  GPTConfig config_;
};
TORCH_MODULE(MLP);

// A pre-LN transformer block: x + drop(attn(ln_1(x))), then x + drop(mlp(ln_2(x))).
struct BlockImpl : torch::nn::Module {
  explicit BlockImpl(const GPTConfig& config);
  at::Tensor forward(const at::Tensor& x);  // (B, T, C) -> (B, T, C)

  LayerNorm ln_1{nullptr};
  CausalSelfAttention attn{nullptr};
  LayerNorm ln_2{nullptr};
  MLP mlp{nullptr};
  torch::nn::Dropout resid_dropout{nullptr};  // the reference's drop_shortcut, applied after attn and after mlp

 private:
  bool selective_;  // checkpoint in selective mode: the LayerNorms' and the GELU's outputs are recomputed
};
TORCH_MODULE(Block);

// GPT: token + learned position embeddings (token only with rotary), pre-LN blocks, final LayerNorm, untied output
// head.
struct GPTImpl : torch::nn::Module {
  // Validates the config (std::invalid_argument) and initialises with PyTorch's defaults from the global seed; with
  // zero_init_proj the output projections are zeroed after that, so every other weight draws what it draws without.
  explicit GPTImpl(const GPTConfig& config);
  // idx (B, T) int64 token ids -> logits (B, T, padded_vocab_size), soft-capped with logit_softcap; throws if T
  // exceeds the context.
  at::Tensor forward(const at::Tensor& idx);
  // idx -> the final LayerNorm's output (B, T, C), the head's input.
  at::Tensor hidden_states(const at::Tensor& idx);
  // The training loss of idx against targets (B, T): cross_entropy(forward(idx), targets); with logit_softcap the cap
  // fused with the cross-entropy (model/softcap.h: the same loss, no (B*T, V) tensor per op of the cap); with
  // chunked_ce the head and the loss in chunks of rows (model/chunked_ce.h), never the whole logits.
  at::Tensor loss(const at::Tensor& idx, const at::Tensor& targets);

  const GPTConfig& config() const { return config_; }
  int64_t parameter_count() const;
  // With fp8: the linear layers whose GEMMs run in FP8 (runs_in_fp8), by module name ("h.0.mlp.c_fc", "lm_head"), in
  // module order; empty without fp8.
  std::vector<std::string> fp8_layers() const;
  // The FLOPs per token of those layers (a part of GPTConfig::flops_per_token): what an fp8 row's MFU counts at FP8's
  // peak.
  double fp8_flops_per_token() const;

  torch::nn::Embedding wte{nullptr};  // (padded_vocab, C)
  torch::nn::Embedding wpe{nullptr};  // (context, C); null with rotary
  torch::nn::Dropout drop{nullptr};
  torch::nn::ModuleList h{nullptr};  // n_layer x Block
  LayerNorm ln_f{nullptr};
  torch::nn::Linear lm_head{nullptr};  // C -> padded_vocab, no bias, not tied to wte (as the reference)

 private:
  // idx -> the head's logits (B, T, padded_vocab_size), before logit_softcap's cap.
  at::Tensor head_logits(const at::Tensor& idx);

  GPTConfig config_;
};
TORCH_MODULE(GPT);

// The fp8 flag's choice for one linear layer (`head`: the output head): fp8 on, the head only with fp8_head, sizes that
// _scaled_mm takes, and torchtitan's small-GEMM filter (fp8_gemm_pays, model/fp8_linear.h) unless fp8_every_layer.
bool runs_in_fp8(const GPTConfig& config, const torch::nn::LinearImpl& layer, bool head);

// The training loss: mean cross-entropy over B*T positions. logits (B, T, V') with V' >= the real vocabulary;
// targets (B, T). As the reference (Raschka's 01_opt_single_gpu.py and nanoGPT), the softmax runs over all V'
// logits, padded ones included: padded ids never occur as targets, so training only pushes their logits down.
at::Tensor cross_entropy(const at::Tensor& logits, const at::Tensor& targets);

}  // namespace stepwise::model
