// judge_budgets: N from the probes up the grid, its bracket, and the pattern when the rule is not monotone in N.
#include "ablations/judges/budget_verdict.h"

#include <algorithm>
#include <map>

namespace stepwise::ablations {

namespace {

constexpr const char* kMeets = "meets the record rule";
constexpr const char* kDoesNotMeet = "does not meet the record rule";

// "holds at 40, fails at 60, holds from 90 to 400": each run of equal outcomes over consecutive probes.
std::string pattern_of(const std::vector<BudgetProbe>& ascending) {
  std::string out;
  for (size_t i = 0; i < ascending.size();) {
    size_t j = i;
    while (j + 1 < ascending.size() && ascending[j + 1].outcome == ascending[i].outcome) ++j;
    const auto from = std::to_string(ascending[i].budget), to = std::to_string(ascending[j].budget);
    out += (out.empty() ? "" : ", ") + to_string(ascending[i].outcome) +
           (i == j ? " at " + from : " from " + from + " to " + to);
    i = j + 1;
  }
  return out;
}

}  // namespace

BudgetOutcome outcome_of(const RecordRule& rule) {
  if (rule.status == kMeets) return BudgetOutcome::Holds;
  if (rule.status == kDoesNotMeet) return BudgetOutcome::Fails;
  return BudgetOutcome::NotJudged;
}

std::string to_string(BudgetOutcome o) {
  switch (o) {
    case BudgetOutcome::Holds: return "holds";
    case BudgetOutcome::Fails: return "fails";
    case BudgetOutcome::NotJudged: return "not judged";
  }
  return "?";
}

BudgetVerdict judge_budgets(const std::vector<int64_t>& grid, const std::vector<BudgetProbe>& probes) {
  std::map<int64_t, BudgetOutcome> at;
  for (const auto& p : probes) at[p.budget] = p.outcome;
  std::vector<BudgetProbe> ascending;
  for (const auto n : grid)
    if (const auto it = at.find(n); it != at.end()) ascending.push_back({n, it->second});
  BudgetVerdict v;
  v.pattern = pattern_of(ascending);
  // Down the grid from its last budget, while every budget probed holds: the last of them is N, the first budget
  // that does not (or was not probed) is its bracket.
  size_t i = grid.size();
  while (i > 0) {
    const auto it = at.find(grid[i - 1]);
    if (it == at.end() || it->second != BudgetOutcome::Holds) break;
    --i;
  }
  if (i == grid.size()) {
    v.below = grid.empty() ? std::nullopt : std::optional(grid.back());
    if (v.below && at.contains(*v.below)) v.below_outcome = at.at(*v.below);
    v.summary = "none: " + (v.below ? "the rule " + (v.below_outcome ? to_string(*v.below_outcome) : "not probed") +
                                          " at the grid's last budget, " + std::to_string(*v.below)
                                    : std::string("an empty grid"));
    return v;
  }
  v.n = grid[i];
  if (i > 0) {
    v.below = grid[i - 1];
    if (at.contains(*v.below)) v.below_outcome = at.at(*v.below);
    for (size_t k = 0; k + 1 < i; ++k)
      if (const auto it = at.find(grid[k]); it != at.end() && it->second == BudgetOutcome::Holds)
        v.held_below.push_back(grid[k]);
  }
  v.monotone = v.held_below.empty();
  v.summary =
      "N " + std::to_string(*v.n) + " in " +
      (v.below ? "(" + std::to_string(*v.below) + ", " + std::to_string(*v.n) + "]: the rule " +
                     (v.below_outcome ? to_string(*v.below_outcome) : "not probed") + " at " + std::to_string(*v.below)
               : "(0, " + std::to_string(*v.n) + "]: below the grid");
  if (!v.monotone) v.summary += "; not monotone: " + v.pattern;
  return v;
}

std::optional<int64_t> next_budget_down(const std::vector<int64_t>& grid, const std::vector<BudgetProbe>& probes) {
  for (auto it = grid.rbegin(); it != grid.rend(); ++it) {
    const auto probe = std::find_if(probes.begin(), probes.end(), [&](const auto& p) { return p.budget == *it; });
    if (probe == probes.end()) return *it;
    if (probe->outcome != BudgetOutcome::Holds) return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace stepwise::ablations
