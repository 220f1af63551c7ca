// GPTConfig's closed forms (sizes, FLOPs), its validation, the SDPA backend names, and the preset table.
#include "model/config.h"

#include <array>
#include <stdexcept>
#include <utility>

namespace stepwise::model {

namespace {

constexpr std::array<std::pair<SdpaBackend, const char*>, 5> kSdpaNames{{
    {SdpaBackend::Auto, "auto"},
    {SdpaBackend::Flash, "flash"},
    {SdpaBackend::Efficient, "efficient"},
    {SdpaBackend::CuDnn, "cudnn"},
    {SdpaBackend::Math, "math"},
}};

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

std::string to_string(SdpaBackend b) {
  for (const auto& [backend, name] : kSdpaNames)
    if (backend == b) return name;
  return "?";
}

std::vector<std::string> sdpa_backend_names() {
  std::vector<std::string> names;
  for (const auto& [backend, name] : kSdpaNames) names.emplace_back(name);
  return names;
}

SdpaBackend sdpa_backend_from_string(const std::string& s) {
  for (const auto& [backend, name] : kSdpaNames)
    if (s == name) return backend;
  throw std::invalid_argument("unknown SDPA backend '" + s + "' (valid: " + joined(sdpa_backend_names()) + ")");
}

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
