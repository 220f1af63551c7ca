// The end of a run's second look at its rows: where each step's time went (the `phases` section of each result,
// bench/phases.h), one row per configuration, one column per phase any row marked, so a flag's cost is seen in
// the phase it lands in (Muon's in the optimizer, zero1's in comm) beside the results table's whole-step ms/step.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace stepwise::ablations {

// Each phase's median ms and its share of the step's median, per row with a split, in the order of `documents`
// (Python rows indented, as in the results table); empty when no row has one.
std::string phase_table(const std::vector<nlohmann::json>& documents);

}  // namespace stepwise::ablations
