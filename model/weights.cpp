// copy_weights: name-by-name transfer with the two layout conversions a flag introduces — flash's fused c_attn
// (rows q | k | v) and vocab_padding's extra embedding and head rows — so every variant starts from the same function;
// rotary's missing position table is simply not copied.
#include "model/weights.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <array>
#include <stdexcept>
#include <string>

namespace stepwise::model {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "h.3.attn.c_attn.weight" -> {"h.3.attn.", "weight"} when the middle is `part`.
bool split_attention_name(const std::string& name, const std::string& part, std::string& prefix, std::string& leaf) {
  const auto at = name.find("attn." + part + ".");
  if (at == std::string::npos) return false;
  prefix = name.substr(0, at + 5);
  leaf = name.substr(at + 5 + part.size() + 1);
  return true;
}

// Vocabulary-sized tensors differ only in their first dimension when the padding differs.
void copy_shared_rows(const at::Tensor& src, at::Tensor& dst) {
  const int64_t rows = std::min(src.size(0), dst.size(0));
  dst.slice(0, 0, rows).copy_(src.slice(0, 0, rows));
}

}  // namespace

void copy_weights(const GPT& from, GPT& to) {
  torch::NoGradGuard no_grad;
  const auto source = from->named_parameters();
  for (auto& item : to->named_parameters()) {
    const std::string& name = item.key();
    at::Tensor& dst = item.value();
    std::string prefix, leaf;
    if (const at::Tensor* src = source.find(name)) {
      if (src->sizes() == dst.sizes()) {
        dst.copy_(*src);
      } else if (src->dim() == dst.dim() && src->size(-1) == dst.size(-1) &&
                 (ends_with(name, "wte.weight") || ends_with(name, "lm_head.weight"))) {
        copy_shared_rows(*src, dst);
      } else {
        throw std::invalid_argument("copy_weights: shape mismatch for " + name);
      }
    } else if (split_attention_name(name, "c_attn", prefix, leaf)) {
      std::array<at::Tensor, 3> parts;
      const std::array<const char*, 3> names{"query", "key", "value"};
      for (size_t i = 0; i < parts.size(); ++i) {
        const at::Tensor* p = source.find(prefix + names[i] + "." + leaf);
        if (!p) throw std::invalid_argument("copy_weights: no source for " + name);
        parts[i] = *p;
      }
      dst.copy_(at::cat({parts[0], parts[1], parts[2]}, 0));  // (3C, C): rows q | k | v
    } else if (split_attention_name(name, "query", prefix, leaf) || split_attention_name(name, "key", prefix, leaf) ||
               split_attention_name(name, "value", prefix, leaf)) {
      const at::Tensor* fused = source.find(prefix + "c_attn." + leaf);
      if (!fused) throw std::invalid_argument("copy_weights: no source for " + name);
      const int64_t index = name.find("attn.query.") != std::string::npos ? 0
                            : name.find("attn.key.") != std::string::npos ? 1
                                                                          : 2;
      dst.copy_(fused->chunk(3, 0)[index]);
    } else if (name == "wpe.weight") {
      throw std::invalid_argument(
          "copy_weights: no source for wpe.weight: the source model is rotary, which has no position table");
    } else {
      throw std::invalid_argument("copy_weights: no source for " + name);
    }
  }
}

}  // namespace stepwise::model
