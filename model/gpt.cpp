// The GPT's forward pass, top to bottom: LayerNorm and GELU, attention, the MLP, a block, the model, the loss. The
// model flags are the `if`s: native_layers in LayerNorm and GELU, dynamic_mask and flash in attention, checkpoint in
// the block (selective) and the model (full), vocab_padding in the embedding and head sizes
// (config.padded_vocab_size()), chunked_ce in the loss, fp8 in every linear layer (linear()); the speedrun's qk_norm
// and rotary on q and k (position_qk()), relu2 in the MLP, rotary's missing wpe and zero_init_proj in the model,
// logit_softcap on the logits.
#include "model/gpt.h"

#include "model/chunked_ce.h"
#include "model/fp8_linear.h"
#include "model/number.h"
#include "model/recompute.h"
#include "model/relu_squared.h"
#include "model/rotary.h"
#include "model/sdpa.h"
#include "model/softcap.h"

#include <torch/csrc/autograd/grad_mode.h>

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <string>

namespace stepwise::model {

namespace {
// GPT-2's LayerNorm epsilon (nn.LayerNorm's default too).
constexpr double kLayerNormEps = 1e-5;
// The constant in GPT-2's tanh approximation of GELU.
constexpr double kGeluCubic = 0.044715;
// GPT-2's hidden width is four times the model width.
constexpr int64_t kMlpExpansion = 4;

// A linear layer as Python's nn.Linear runs it: at::linear, which folds the bias into the GEMM (one addmm) for inputs
// of any rank. torch::nn::Linear's own forward multiplies first and adds the bias after for a (B, T, C) input, so under
// bf16 autocast the product is rounded to bf16 before the bias is added: another function than the reference's.
//
// fp8: the layer's three GEMMs as FP8 scaled matmuls (model/fp8_linear.h) where runs_in_fp8() says so.
at::Tensor linear(const torch::nn::Linear& layer, const at::Tensor& x, const GPTConfig& config, bool head = false) {
  if (runs_in_fp8(config, *layer, head)) return fp8_linear(x, layer->weight, layer->bias, config.fp8_scaling());
  return at::linear(x, layer->weight, layer->bias);
}
}  // namespace

bool runs_in_fp8(const GPTConfig& config, const torch::nn::LinearImpl& layer, bool head) {
  if (!config.fp8() || (head && !config.fp8_head())) return false;
  const int64_t in = layer.options.in_features(), out = layer.options.out_features();
  return config.fp8_every_layer() ? fp8_dims_supported(in, out) : fp8_gemm_pays(in, out, config.fp8_scaling());
}

// ---------------------------------------------------------------- LayerNorm and GELU (native_layers)

LayerNormImpl::LayerNormImpl(int64_t dim, bool native) : dim(dim), native(native) {
  weight = register_parameter("weight", at::ones({dim}));
  bias = register_parameter("bias", at::zeros({dim}));
}

at::Tensor LayerNormImpl::forward(const at::Tensor& x) {
  if (native) return at::layer_norm(x, {dim}, weight, bias, kLayerNormEps);
  auto mean = x.mean(-1, /*keepdim=*/true);
  auto var = x.var(-1, /*unbiased=*/false, /*keepdim=*/true);  // biased, as the reference
  return weight * ((x - mean) / at::sqrt(var + number(kLayerNormEps))) + bias;
}

at::Tensor gelu_tanh(const at::Tensor& x, bool native) {
  if (native) return at::gelu(x, "tanh");
  const double k = std::sqrt(2.0 / std::numbers::pi);
  // In Python's order, left to right: x feeds three ops, and the order they are recorded in is the order backward sums
  // their gradients into x's (in bf16 under autocast, a different sum). C++ leaves the operands of `*` unsequenced.
  // Each constant goes in as Python's `0.5 * x` passes it, x.mul(number): one op, not the Scalar overload's two.
  auto half_x = x * number(0.5);
  auto inner = (x + at::pow(x, 3) * number(kGeluCubic)) * number(k);
  return half_x * (at::tanh(inner) + number(1.0));
}

// ---------------------------------------------------------------- attention (dynamic_mask, flash)

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
  if (config_.flash()) return attend_fused(linear(c_attn, x, config_));
  const int64_t B = x.size(0), T = x.size(1);
  const int64_t H = config_.n_head(), D = config_.head_dim();
  auto q = linear(query, x, config_).view({B, T, H, D}).transpose(1, 2);  // (B, H, T, D)
  auto k = linear(key, x, config_).view({B, T, H, D}).transpose(1, 2);    // (B, H, T, D)
  auto v = linear(value, x, config_).view({B, T, H, D}).transpose(1, 2);  // (B, H, T, D)
  return attend(q, k, v);
}

std::vector<torch::nn::Linear> CausalSelfAttentionImpl::projections() const {
  if (config_.flash()) return {c_attn};
  return {query, key, value};
}

at::Tensor CausalSelfAttentionImpl::forward_projected(const std::vector<at::Tensor>& projected) {
  if (config_.flash()) return attend_fused(projected.at(0));
  const int64_t B = projected.at(0).size(0), T = projected.at(0).size(1);
  const int64_t H = config_.n_head(), D = config_.head_dim();
  const auto heads = [&](const at::Tensor& p) { return p.view({B, T, H, D}).transpose(1, 2); };  // (B, H, T, D)
  return attend(heads(projected.at(0)), heads(projected.at(1)), heads(projected.at(2)));
}

std::pair<at::Tensor, at::Tensor> CausalSelfAttentionImpl::position_qk(const at::Tensor& q, const at::Tensor& k) const {
  at::Tensor q_out = q, k_out = k;  // (B, H, T, D)
  if (config_.qk_norm()) {
    // Over each head's D dimensions, no weight, eps = PyTorch's default (the dtype's machine epsilon).
    q_out = at::rms_norm(q_out, {config_.head_dim()});
    k_out = at::rms_norm(k_out, {config_.head_dim()});
  }
  if (config_.rotary()) {
    // (T, D/2) each, in q's dtype, built once per shape, device and dtype (not per layer and step)
    const auto [cos, sin] = cached_rotary_tables(q.size(2), config_.head_dim(), q.device(), q.scalar_type());
    q_out = apply_rotary(q_out, cos, sin);
    k_out = apply_rotary(k_out, cos, sin);
  }
  return {q_out, k_out};
}

at::Tensor CausalSelfAttentionImpl::attend_fused(const at::Tensor& qkv_projected) {
  const int64_t B = qkv_projected.size(0), T = qkv_projected.size(1), C = config_.n_embd();
  const int64_t H = config_.n_head(), D = config_.head_dim();
  auto qkv = qkv_projected.view({B, T, 3, H, D}).permute({2, 0, 3, 1, 4});  // (3, B, H, T, D)
  const auto [q, k] = position_qk(qkv[0], qkv[1]);                          // (B, H, T, D) each
  SdpaBackendGuard pin(config_.sdpa_backend());
  std::optional<at::Tensor> sees_ahead;  // tests only: true where attention is allowed, one token past causal
  if (config_.test_sees_next_token())
    sees_ahead = at::tril(at::ones({T, T}, at::TensorOptions().dtype(at::kBool).device(qkv.device())), 1);
  auto y = at::scaled_dot_product_attention(q, k, qkv[2], sees_ahead, is_training() ? config_.dropout() : 0.0,
                                            /*is_causal=*/!sees_ahead);            // (B, H, T, D)
  return linear(c_proj, y.transpose(1, 2).contiguous().view({B, T, C}), config_);  // (B, T, C)
}

at::Tensor CausalSelfAttentionImpl::attend(const at::Tensor& q_projected, const at::Tensor& k_projected,
                                           const at::Tensor& v) {
  const int64_t B = v.size(0), T = v.size(2), C = config_.n_embd();
  const int64_t D = config_.head_dim();
  const auto [q, k] = position_qk(q_projected, k_projected);  // (B, H, T, D) each
  // (T, T) true above the diagonal: built for this length, or the reference's stored buffer converted to bool on
  // every forward, then sliced.
  auto causal = config_.dynamic_mask()
                    ? at::triu(at::ones({T, T}, at::TensorOptions().dtype(at::kBool).device(q.device())), 1)
                    : mask.to(at::kBool).slice(0, 0, T).slice(1, 0, T);
  if (config_.test_sees_next_token()) causal = at::triu(at::ones_like(causal), 2);  // tests only: one token ahead
  auto scores = at::matmul(q, k.transpose(2, 3));                                   // (B, H, T, T)
  scores.masked_fill_(causal, -std::numeric_limits<double>::infinity());
  auto y =
      at::matmul(attn_dropout(at::softmax(scores / number(std::sqrt(static_cast<double>(D))), -1)), v);  // (B,H,T,D)
  return linear(c_proj, y.transpose(1, 2).contiguous().view({B, T, C}), config_);                        // (B, T, C)
}

// ---------------------------------------------------------------- MLP and block

MLPImpl::MLPImpl(const GPTConfig& config) : native_gelu(config.native_layers()), config_(config) {
  const int64_t C = config.n_embd();
  c_fc = register_module("c_fc", torch::nn::Linear(C, kMlpExpansion * C));
  c_proj = register_module("c_proj", torch::nn::Linear(kMlpExpansion * C, C));
}

at::Tensor MLPImpl::forward(const at::Tensor& x) {
  return linear(c_proj, activation(linear(c_fc, x, config_)), config_);  // (B, T, 4C) inside
}

at::Tensor MLPImpl::activation(const at::Tensor& hidden) const {
  return config_.relu2() ? relu_squared(hidden) : gelu_tanh(hidden, native_gelu);
}

BlockImpl::BlockImpl(const GPTConfig& config)
    : selective_(config.checkpoint() && config.checkpoint_mode() == CheckpointMode::Selective) {
  ln_1 = register_module("ln_1", LayerNorm(config.n_embd(), config.native_layers()));
  attn = register_module("attn", CausalSelfAttention(config));
  ln_2 = register_module("ln_2", LayerNorm(config.n_embd(), config.native_layers()));
  mlp = register_module("mlp", MLP(config));
  resid_dropout = register_module("resid_dropout", torch::nn::Dropout(config.dropout()));
}

at::Tensor BlockImpl::forward(const at::Tensor& x) {
  if (selective_ && is_training() && torch::GradMode::is_enabled()) {
    // checkpoint, selective (llm.c's -r 2): each LayerNorm and the GELU runs inside the Function that applies the
    // linears after it, so their outputs are recomputed in the backward; the matmuls' outputs are kept.
    const auto norm = [](LayerNorm ln) { return [ln](const at::Tensor& t) mutable { return ln->forward(t); }; };
    auto h = x + resid_dropout(attn->forward_projected(linears_of_recomputed(norm(ln_1), x, attn->projections())));
    auto hidden = linears_of_recomputed(norm(ln_2), h, {mlp->c_fc})[0];  // (B, T, 4C), kept
    auto out =
        linears_of_recomputed([m = mlp](const at::Tensor& t) { return m->activation(t); }, hidden, {mlp->c_proj})[0];
    return h + resid_dropout(out);
  }
  auto h = x + resid_dropout(attn(ln_1(x)));
  return h + resid_dropout(mlp(ln_2(h)));
}

// ---------------------------------------------------------------- the model (vocab_padding) and the loss

GPTImpl::GPTImpl(const GPTConfig& config) : config_(config) {
  config.validate();
  const int64_t C = config.n_embd();
  wte = register_module("wte", torch::nn::Embedding(config.padded_vocab_size(), C));
  if (!config.rotary()) wpe = register_module("wpe", torch::nn::Embedding(config.context_length(), C));
  drop = register_module("drop", torch::nn::Dropout(config.dropout()));
  h = register_module("h", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.n_layer(); ++i) h->push_back(Block(config));
  ln_f = register_module("ln_f", LayerNorm(C, config.native_layers()));
  lm_head = register_module("lm_head",
                            torch::nn::Linear(torch::nn::LinearOptions(C, config.padded_vocab_size()).bias(false)));
  if (config.zero_init_proj()) {
    // After every default initialisation, so the other weights are those of the model without the flag.
    torch::NoGradGuard no_grad;
    for (const auto& block : *h)
      for (auto* proj : {block->as<Block>()->attn->c_proj.get(), block->as<Block>()->mlp->c_proj.get()}) {
        proj->weight.zero_();
        proj->bias.zero_();
      }
    if (config.zero_init_head()) lm_head->weight.zero_();  // (padded_vocab, C)
  }
}

at::Tensor GPTImpl::hidden_states(const at::Tensor& idx) {
  const int64_t T = idx.size(1);
  if (T > config_.context_length())
    throw std::invalid_argument("sequence length " + std::to_string(T) + " exceeds the model's context length " +
                                std::to_string(config_.context_length()));
  at::Tensor x;  // (B, T, C)
  if (config_.rotary()) {
    x = drop(wte(idx));  // positions enter in attention, as rotations of q and k
  } else {
    auto pos = at::arange(T, at::TensorOptions().dtype(at::kLong).device(idx.device()));  // (T)
    x = drop(wte(idx) + wpe(pos));
  }
  // checkpoint, full: each block keeps only its input, and runs again in the backward with the same dropout masks.
  const bool full = config_.checkpoint() && config_.checkpoint_mode() == CheckpointMode::Full && is_training() &&
                    torch::GradMode::is_enabled();
  for (const auto& block : *h) {
    auto* b = block->as<Block>();
    x = full ? checkpointed([b](const at::Tensor& in) { return b->forward(in); }, x, config_.dropout() > 0)
             : b->forward(x);
  }
  return ln_f(x);  // (B, T, C)
}

at::Tensor GPTImpl::head_logits(const at::Tensor& idx) {
  return linear(lm_head, hidden_states(idx), config_, /*head=*/true);  // (B, T, padded_vocab)
}

at::Tensor GPTImpl::forward(const at::Tensor& idx) {
  auto logits = head_logits(idx);  // (B, T, padded_vocab)
  return config_.logit_softcap() ? soft_cap(logits, config_.softcap()) : logits;
}

at::Tensor GPTImpl::loss(const at::Tensor& idx, const at::Tensor& targets) {
  if (config_.chunked_ce())  // the head and the loss a chunk of rows at a time; the (B*T, V) logits never exist
    return chunked_linear_cross_entropy(hidden_states(idx).flatten(0, 1), lm_head->weight, targets.flatten(),
                                        config_.ce_chunk_rows(), config_.logit_softcap() ? config_.softcap() : 0.0);
  if (!config_.logit_softcap()) return cross_entropy(forward(idx), targets);
  // logit_softcap: the cap fused with the cross-entropy, what forward's cap and cross_entropy compute (model/softcap.h)
  return soft_capped_cross_entropy(head_logits(idx).flatten(0, 1), targets.flatten(), config_.softcap());
}

std::vector<std::string> GPTImpl::fp8_layers() const {
  std::vector<std::string> names;
  for (const auto& item : named_modules(/*name_prefix=*/"", /*include_self=*/false)) {
    const auto* layer = item.value()->as<torch::nn::Linear>();
    if (layer && runs_in_fp8(config_, *layer, /*head=*/item.key() == "lm_head")) names.push_back(item.key());
  }
  return names;
}

double GPTImpl::fp8_flops_per_token() const {
  // 6 FLOPs per weight and token, as GPTConfig::flops_per_token counts every matmul: forward, grad_input, grad_weight.
  const auto modules = named_modules(/*name_prefix=*/"", /*include_self=*/false);
  double flops = 0;
  for (const auto& name : fp8_layers())
    flops += 6.0 * static_cast<double>(modules[name]->as<torch::nn::Linear>()->weight.numel());
  return flops;
}

int64_t GPTImpl::parameter_count() const {
  int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();
  return n;
}

at::Tensor cross_entropy(const at::Tensor& logits, const at::Tensor& targets) {
  return at::cross_entropy_loss(logits.flatten(0, 1), targets.flatten());
}

}  // namespace stepwise::model
