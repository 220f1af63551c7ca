// The second table under the time-to-target table: each row's time and steps to target against the baseline's (the
// ratio of medians, its 95% interval and Welch's p) and the speedrun's record rule at the step budget, read from the
// result documents' convergence.verdict and convergence.record_rule.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace stepwise::ablations {

// Empty when no document carries a verdict or a record rule.
std::string verdict_table(const std::vector<nlohmann::json>& documents);

}  // namespace stepwise::ablations
