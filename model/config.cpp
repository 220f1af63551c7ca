// GPTConfig: validation, closed-form sizes and the SDPA backend names.
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

}  // namespace stepwise::model
