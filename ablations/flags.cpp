// The flag table and its helpers.
#include "ablations/flags.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>

namespace stepwise::ablations {

namespace {

using bench::RunConfig;

void apply_dynamic_mask(RunConfig& c, const FlagOptions&) { c.model.dynamic_mask(true); }
void apply_tf32(RunConfig& c, const FlagOptions&) { c.tf32 = true; }
void apply_fused_adamw(RunConfig& c, const FlagOptions&) { c.adamw_kind = bench::AdamWKind::Fused; }
void apply_pinned_memory(RunConfig& c, const FlagOptions& o) { c.copy_mode = o.pinned_mode; }
void apply_bf16(RunConfig& c, const FlagOptions& o) {
  c.bf16 = true;
  c.bf16_mode = o.bf16_mode;
}
void apply_native_layers(RunConfig& c, const FlagOptions&) { c.model.native_layers(true); }
void apply_flash(RunConfig& c, const FlagOptions& o) { c.model.flash(true).sdpa_backend(o.sdpa_backend); }
void apply_compile(RunConfig& c, const FlagOptions&) { c.cuda_graph = true; }
void apply_vocab_padding(RunConfig& c, const FlagOptions&) { c.model.vocab_padding(true); }
void apply_max_batch(RunConfig& c, const FlagOptions&) { c.max_batch = true; }

std::string valid_names() {
  std::string out;
  for (const auto& f : flag_table()) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

}  // namespace

std::string to_string(Applies a) { return a == Applies::Both ? "cpu+cuda" : "cuda"; }

const std::vector<FlagSpec>& flag_table() {
  static const std::vector<FlagSpec> table{
      {"dynamic_mask", "causal mask built per forward for the current length",
       "a stored context x context mask buffer, converted to bool on every forward", "model", Applies::Both, "",
       apply_dynamic_mask},
      {"tf32", "float32 matmuls and convolutions on TF32 tensor cores",
       "IEEE float32 matmuls (at::globalContext() precision API)", "backend", Applies::CudaOnly,
       "a CUDA device (tensor cores)", apply_tf32},
      {"fused_adamw", "AdamW as one fused kernel (at::_fused_adamw_)",
       "torch::optim::AdamW's per-parameter loop (--adamw-baseline=foreach picks the foreach form)", "optimizer",
       Applies::Both, "", apply_fused_adamw},
      {"pinned_memory", "batches staged in pinned host memory by the loader thread, copied non_blocking on a copy stream",
       "pageable host memory and a blocking copy (--pinned-mode=blocking: pinned but blocking, Raschka's row)", "data",
       Applies::CudaOnly, "a CUDA device (pinned memory only speeds host-to-device copies)", apply_pinned_memory},
      {"bf16", "bfloat16 compute: pure (weights cast) or autocast, per --bf16-mode", "float32 everywhere", "model",
       Applies::Both, "", apply_bf16},
      {"native_layers", "torch's native LayerNorm and gelu(approximate=\"tanh\")",
       "hand-written LayerNorm and tanh-GELU formulas", "model", Applies::Both, "", apply_native_layers},
      {"flash", "one fused QKV projection and scaled_dot_product_attention(is_causal)",
       "separate Q/K/V projections and an explicit masked softmax (--sdpa-backend pins a kernel)", "model",
       Applies::Both, "", apply_flash},
      {"compile",
       "forward, loss and backward captured once as a CUDA graph and replayed (torch.compile's reduce-overhead); "
       "the optimizer steps eagerly after each replay, as beside torch.compile(model)",
       "eager execution, one kernel launch at a time", "step", Applies::CudaOnly, "a CUDA device (CUDA graphs)",
       apply_compile},
      {"vocab_padding", "vocabulary padded from 50257 to 50304 (next multiple of 64)",
       "the 50257-token vocabulary", "model", Applies::Both, "", apply_vocab_padding},
      {"max_batch", "batch raised to the largest power of two that fits (probed, bounded by --max-batch-limit)",
       "the base batch (--batch-size or the preset's)", "batch", Applies::Both, "", apply_max_batch},
  };
  return table;
}

const FlagSpec* find_flag(std::string_view name) {
  for (const auto& f : flag_table())
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<std::string> flag_names() {
  std::vector<std::string> names;
  for (const auto& f : flag_table()) names.emplace_back(f.name);
  return names;
}

std::optional<std::string> unmet_precondition(const FlagSpec& flag, const c10::Device& device) {
  if (flag.applies == Applies::CudaOnly && !device.is_cuda()) return "requires " + std::string(flag.precondition);
  return std::nullopt;
}

std::vector<std::string> in_table_order(const std::vector<std::string>& names) {
  for (const auto& n : names)
    if (!find_flag(n)) throw std::invalid_argument("unknown flag '" + n + "' (valid: " + valid_names() + ")");
  std::vector<std::string> ordered;
  for (const auto& f : flag_table())
    if (std::find(names.begin(), names.end(), f.name) != names.end()) ordered.emplace_back(f.name);
  return ordered;
}

std::vector<std::string> parse_flag_list(const std::string& list) {
  if (list == "all") return flag_names();
  std::vector<std::string> names;
  std::set<std::string> seen;
  std::stringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) {
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (name.empty()) continue;
    if (!find_flag(name)) throw std::invalid_argument("unknown flag '" + name + "' (valid: " + valid_names() + ", all)");
    if (!seen.insert(name).second) throw std::invalid_argument("flag '" + name + "' is named twice");
    names.push_back(name);
  }
  return in_table_order(names);
}

}  // namespace stepwise::ablations
