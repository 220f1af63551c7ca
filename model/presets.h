// Named model presets: GPT-2 sizes and small CPU-sized models, with the batch each is measured at by default.
#pragma once

#include "model/config.h"

#include <string>
#include <vector>

namespace stepwise::model {

struct Preset {
  std::string name;
  std::string description;
  GPTConfig config;
  int64_t default_batch_size;
  int64_t default_seq_len;
};

const std::vector<Preset>& presets();
// Throws std::invalid_argument naming the valid presets.
const Preset& preset(const std::string& name);
std::vector<std::string> preset_names();

}  // namespace stepwise::model
