// GPTConfig's closed forms (sizes, FLOPs), its validation, its enums' names, and the preset table.
#include "model/config.h"

#include "model/chunked_ce.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace stepwise::model {

namespace {

constexpr double kFloatBytes = 4;  // float32: log-probabilities, and logit_softcap's shifted cap

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

GPTConfig gpt2(int64_t n_layer, int64_t n_head, int64_t n_embd) {
  return GPTConfig().n_layer(n_layer).n_head(n_head).n_embd(n_embd).context_length(1024);
}

// CPU presets keep GPT-2's 50257-token vocabulary so vocab_padding still means something.
GPTConfig cpu_sized(int64_t n_layer, int64_t n_head, int64_t n_embd, int64_t context_length) {
  return GPTConfig().n_layer(n_layer).n_head(n_head).n_embd(n_embd).context_length(context_length);
}

}  // namespace

std::string to_string(SdpaBackend b) { return kSdpaBackendNames.to_string(b); }
std::vector<std::string> sdpa_backend_names() { return kSdpaBackendNames.names(); }
SdpaBackend sdpa_backend_from_string(const std::string& s) { return kSdpaBackendNames.from_string(s); }

std::string to_string(CheckpointMode m) { return kCheckpointModeNames.to_string(m); }
std::vector<std::string> checkpoint_mode_names() { return kCheckpointModeNames.names(); }
CheckpointMode checkpoint_mode_from_string(const std::string& s) { return kCheckpointModeNames.from_string(s); }

std::string to_string(Fp8Scaling s) { return kFp8ScalingNames.to_string(s); }
std::vector<std::string> fp8_scaling_names() { return kFp8ScalingNames.names(); }
Fp8Scaling fp8_scaling_from_string(const std::string& s) { return kFp8ScalingNames.from_string(s); }

int64_t GPTConfig::padded_vocab_size() const {
  if (!vocab_padding()) return vocab_size();
  return (vocab_size() + kVocabPadMultiple - 1) / kVocabPadMultiple * kVocabPadMultiple;
}

void GPTConfig::validate() const {
  auto positive = [](int64_t v, const char* what) {
    if (v <= 0) throw std::invalid_argument(std::string(what) + " must be positive, got " + std::to_string(v));
  };
  positive(vocab_size(), "vocab_size");
  positive(context_length(), "context_length");
  positive(n_embd(), "n_embd");
  positive(n_head(), "n_head");
  positive(n_layer(), "n_layer");
  if (n_embd() % n_head() != 0)
    throw std::invalid_argument("n_head (" + std::to_string(n_head()) + ") must divide n_embd (" +
                                std::to_string(n_embd()) + ")");
  if (!(dropout() >= 0.0 && dropout() < 1.0))
    throw std::invalid_argument("dropout must be in [0, 1), got " + std::to_string(dropout()));
  if (ce_chunk_rows() < 0)
    throw std::invalid_argument("ce_chunk_rows must be 0 (Liger's rule) or positive, got " +
                                std::to_string(ce_chunk_rows()));
  if (rotary() && head_dim() % 2 != 0)
    throw std::invalid_argument("rotary rotates pairs of dimensions: the head dimension (n_embd / n_head = " +
                                std::to_string(head_dim()) + ") must be even");
  if (logit_softcap() && !(softcap() > 0 && std::isfinite(softcap())))
    throw std::invalid_argument("softcap must be a positive number, got " + std::to_string(softcap()));
  // Two Functions that run their own matmuls, which the fp8 path does not reach (yet).
  if (fp8() && checkpoint() && checkpoint_mode() == CheckpointMode::Selective)
    throw std::invalid_argument(
        "fp8 does not compose with checkpoint's selective mode: its recompute runs the linears' backward itself");
  if (fp8() && fp8_head() && chunked_ce())
    throw std::invalid_argument("fp8_head does not compose with chunked_ce: the chunked head runs its own matmuls");
}

int64_t GPTConfig::matmul_parameter_count() const {
  return parameter_count() - position_embedding_parameters() - padded_vocab_size() * n_embd();
}

int64_t GPTConfig::parameter_count() const {
  const int64_t C = n_embd();
  const int64_t V = padded_vocab_size();
  const int64_t attention = 3 * C * C + (qkv_bias() ? 3 * C : 0) + C * C + C;  // QKV + c_proj (with bias)
  const int64_t mlp = C * 4 * C + 4 * C + 4 * C * C + C;                       // c_fc + c_proj
  const int64_t norms = 2 * 2 * C;                                             // ln_1, ln_2
  return V * C + position_embedding_parameters() + n_layer() * (attention + mlp + norms) + 2 * C + V * C;
}

double GPTConfig::flops_per_token(int64_t seq_len) const {
  // 6N counts each weight a token multiplies once forward and twice backward. Both embeddings are lookups, not
  // matmuls, so N leaves them out; the untied output head is a matmul and stays in. (nanoGPT subtracts only wpe:
  // its wte is tied to lm_head, so that one matrix is counted once, as here.)
  const double N = static_cast<double>(matmul_parameter_count());
  return 6.0 * N + 12.0 * static_cast<double>(n_layer() * n_head() * head_dim() * seq_len);
}

double GPTConfig::hardware_flops_per_token(int64_t seq_len) const {
  if (!checkpoint() || checkpoint_mode() != CheckpointMode::Full) return flops_per_token(seq_len);
  // Full checkpointing runs every block's forward twice: its matmuls (all but the head) and its attention.
  const double block_weights = static_cast<double>(matmul_parameter_count() - padded_vocab_size() * n_embd());
  return flops_per_token(seq_len) + 2.0 * block_weights +
         4.0 * static_cast<double>(n_layer() * n_head() * head_dim() * seq_len);
}

double GPTConfig::activation_bytes_per_sequence(int64_t seq_len, double element_bytes, bool cuda) const {
  // Counted per token, in elements of element_bytes, from what each op of model/gpt.cpp saves for its backward.
  const double C = static_cast<double>(n_embd()), T = static_cast<double>(seq_len);
  const double H = static_cast<double>(n_head()), V = static_cast<double>(padded_vocab_size());
  const bool drops = dropout() > 0;
  // A dropout keeps its scaled noise in the element type on a CPU, a one-byte mask on CUDA (its fused kernel).
  const double mask = !drops ? 0.0 : cuda ? 1.0 / element_bytes : 1.0;
  // The hand-written LayerNorm keeps x - mean and the normalised x besides its output; native keeps the output only
  // (its mean and rstd are one number per token). The hand-written GELU keeps tanh(.), x/2 and 1 + tanh(.) besides
  // its input and output; native keeps input and output.
  const double layer_norm = native_layers() ? 1 : 3;
  // relu2 keeps the ReLU's output and its square (c_proj's input), 4C each, as the native GELU keeps its input and
  // output.
  const double gelu = relu2() || native_layers() ? 8 : 20;  // in units of C, the 4C-wide input counted
  // Attention: q, k, v (the batched matmuls' contiguous copies, or the fused projection) and the input of c_proj; the
  // explicit form also keeps the softmax and its dropout, (H, T) per token each. SDPA's fused kernels keep a row
  // statistic only, but a CPU runs its math form when dropout is on.
  const bool fused = flash() && (cuda || !drops);
  // qk_norm keeps its inputs (the projected q and k) beside its outputs, which attention keeps; rotary's outputs are
  // new tensors (a rotation saves only its cos and sin tables), which adds q and k in the flash layout, where v's view
  // keeps the whole fused projection alive, and nothing in the reference layout, where the rotated q and k replace the
  // projections attention would have kept.
  const double q_and_k = qk_norm() || (rotary() && flash()) ? 2 * C : 0;
  const double attention = q_and_k + (fused ? 4 * C : 4 * C + (drops ? 2 : 1) * H * T + mask * H * T);
  const double residual_masks = 2 * mask * C;
  // Block input, the mid-block residual, two LayerNorms, attention, the MLP (c_fc's output inside gelu).
  double per_layer = C + C + 2 * layer_norm * C + attention + gelu * C + residual_masks;
  double kept = static_cast<double>(n_layer()) * per_layer;
  if (checkpoint() && checkpoint_mode() == CheckpointMode::Full) {
    // Every block's input, and one block's activations while its forward runs again in the backward.
    kept = static_cast<double>(n_layer()) * C + per_layer;
  } else if (checkpoint()) {
    // Selective: the LayerNorms and the GELU keep only their input; q, k, v, attention and c_fc's output stay.
    kept = static_cast<double>(n_layer()) * (C + C + attention + 4 * C + residual_masks);
  }
  // The embeddings' dropout, the final LayerNorm with its input.
  kept += mask * C + C + layer_norm * C;
  // The head: the logits, their log-softmax and its gradient are alive together at the start of the backward. In
  // chunks, only the gradient of the hidden state stays per token (a chunk's logits are a few rows at a time).
  // logit_softcap keeps its shifted cap as well (its backward's operand), in float32.
  const double softcap_bytes = logit_softcap() && !chunked_ce() ? kFloatBytes * V : 0;
  kept += chunked_ce() ? C : 3 * V;
  return (kept * element_bytes + softcap_bytes) * T;
}

double GPTConfig::chunked_ce_step_bytes(int64_t rows, double element_bytes) const {
  if (!chunked_ce()) return 0;
  const int64_t per_chunk =
      ce_chunk_rows() > 0 ? ce_chunk_rows() : chunked_ce_rows(rows, padded_vocab_size(), n_embd());
  const double V = static_cast<double>(padded_vocab_size());
  const double chunk = static_cast<double>(std::min(rows, per_chunk));
  // The chunk's logits, and with logit_softcap their shifted cap in float32; their float32 log-probabilities.
  const double logits = element_bytes + (logit_softcap() ? kFloatBytes : 0);
  return chunk * V * (logits + kFloatBytes) + V * static_cast<double>(n_embd()) * kFloatBytes;
}

const std::vector<Preset>& presets() {
  // Batch 8 at sequence 1024 is Raschka's baseline; the CPU presets are sized so a whole suite runs in minutes.
  static const std::vector<Preset> table{
      {"tiny", "2 layers, width 64: tests and smoke runs", cpu_sized(2, 2, 64, 128), 4, 64},
      {"mini", "4 layers, width 128: CPU suites", cpu_sized(4, 4, 128, 256), 4, 128},
      {"small", "6 layers, width 384: slower CPU runs", cpu_sized(6, 6, 384, 512), 4, 256},
      {"gpt2-124m", "GPT-2 124M as in Raschka's 00_orig.py (untied head: 163,009,536)", gpt2(12, 12, 768), 8, 1024},
      {"gpt2-medium", "GPT-2 medium, 24 layers, width 1024", gpt2(24, 16, 1024), 8, 1024},
      {"gpt2-large", "GPT-2 large, 36 layers, width 1280", gpt2(36, 20, 1280), 4, 1024},
      {"gpt2-xl", "GPT-2 XL, 48 layers, width 1600", gpt2(48, 25, 1600), 2, 1024},
  };
  return table;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& p : presets()) names.push_back(p.name);
  return names;
}

const Preset& preset(const std::string& name) {
  for (const auto& p : presets())
    if (p.name == name) return p;
  throw std::invalid_argument("unknown preset '" + name + "' (valid: " + joined(preset_names()) + ")");
}

}  // namespace stepwise::model
