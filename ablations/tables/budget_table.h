// The budget search's table at the end of ./ablate --find-budget, from budget.json as the search wrote it (the report
// draws its own from the same file): per row N with its bracket, N and the seconds at N over the baseline's as
// intervals from the two brackets, what the search cost, and where the rule is not monotone in N, its pattern.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace stepwise::ablations {

// `search`: ablations/run/budget_search.h's budget_json, finished.
std::string budget_table(const nlohmann::json& search);

}  // namespace stepwise::ablations
