// What ./ablate lists before anything runs: --list-flags, --list-presets, --list-suites and --describe's model sizes.
#pragma once

#include "model/config.h"

#include <cstdint>
#include <string>

namespace stepwise::ablations {

// verbose: also the files that hold each flag's effect.
std::string list_flags(bool json, bool verbose = false);
std::string list_presets(bool json);
std::string list_suites();
// `model`: the preset's with any --n-layer, --n-head, --n-embd, --context-length, --vocab-size laid over it.
// `cuda`: estimate activation memory as on a GPU (a CPU keeps dropout's noise in floats and runs SDPA's math form).
std::string describe_preset(const std::string& preset, const model::GPTConfig& model, int64_t seq_len, bool json,
                            bool cuda = false);

// "n_layer 4, vocab_size 65": the dimensions of `model` that differ from the preset's; empty when none do.
std::string dimension_overrides(const model::GPTConfig& preset, const model::GPTConfig& model);

}  // namespace stepwise::ablations
