// The llm.c-style table printed before a run starts: the resolved configuration, the device and its peak, and each
// configuration with the flags in effect.
#pragma once

#include "ablations/run/plan.h"
#include "ablations/run/suite.h"
#include "bench/run_config.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace stepwise::ablations {

// The startup table's data line: what was read, its size, its validation stream and its vocabulary.
std::string data_summary(const bench::DataOptions& data);

// llm.c-style table of the resolved configuration, printed before anything runs.
std::string startup_table(const Suite& suite, const bench::RunConfig& base, const std::vector<PlannedConfig>& planned,
                          const nlohmann::json& env, const std::string& out_dir);

}  // namespace stepwise::ablations
