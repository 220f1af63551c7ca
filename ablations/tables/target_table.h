// Time to a target loss at the end of a run: per configuration the seeds that reached it, steps, tokens and seconds
// to it, x baseline, and the convergence guard's verdict.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace stepwise::ablations {

// Time to a target loss, one row per configuration trained to it: seeds that reached it, steps, tokens and timed
// seconds to it (median [interval]), the olympic mean, x baseline in time and in steps, the convergence guard's
// verdict. Empty when no document trained to a target.
std::string convergence_table(const std::vector<nlohmann::json>& documents);

}  // namespace stepwise::ablations
