// The preset table: GPT-2 124M (the reference), its larger siblings, and CPU-sized models with the full vocabulary.
#include "model/presets.h"

#include <stdexcept>

namespace stepwise::model {

namespace {

GPTConfig gpt2(int64_t n_layer, int64_t n_head, int64_t n_embd) {
  return GPTConfig().n_layer(n_layer).n_head(n_head).n_embd(n_embd).context_length(1024);
}

// CPU presets keep GPT-2's 50257-token vocabulary so vocab_padding still means something.
GPTConfig cpu_sized(int64_t n_layer, int64_t n_head, int64_t n_embd, int64_t context_length) {
  return GPTConfig().n_layer(n_layer).n_head(n_head).n_embd(n_embd).context_length(context_length);
}

}  // namespace

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
  std::string valid;
  for (const auto& n : preset_names()) valid += (valid.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown preset '" + name + "' (valid: " + valid + ")");
}

}  // namespace stepwise::model
