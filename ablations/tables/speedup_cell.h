// A speedup with its 95% interval as the terminal's tables print it: "1.15 [1.14-1.18]", n.s. when the interval
// holds 1.00. The interval is the engine's median_ratio_interval, the report's bootstrap by other seeds.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace stepwise::ablations {

// tok/s of `doc` over `reference` with its interval; `unresolved` is set when the interval contains 1.
std::string speedup_cell(const nlohmann::json& doc, const nlohmann::json& reference, bool& unresolved);

}  // namespace stepwise::ablations
