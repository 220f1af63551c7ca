// The budget search's answer for one row: from its record rule at each budget it probed on the grid, the smallest N
// from which the rule holds at every budget probed above it, and what bounds N: the grid budget just below it, where
// the rule did not hold (or was not judged), or "below the grid". Nothing is assumed where it was not probed: a row
// whose rule holds, then fails, then holds again up the grid (noise near the target) takes N above its highest
// failure and says which budgets held below it; a probe that was not judged is never a pass.
#pragma once

#include "ablations/judges/record_rule.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stepwise::ablations {

// A probe's outcome, from its rule's status.
enum class BudgetOutcome { Holds, Fails, NotJudged };
BudgetOutcome outcome_of(const RecordRule& rule);
std::string to_string(BudgetOutcome o);  // "holds", "fails", "not judged"

// One probe of a row: its budget and the rule there.
struct BudgetProbe {
  int64_t budget = 0;
  BudgetOutcome outcome = BudgetOutcome::NotJudged;
};

struct BudgetVerdict {
  // The smallest grid budget at which the rule holds and holds at every budget probed above it; none when it does
  // not hold at the grid's last budget.
  std::optional<int64_t> n;
  // N's bracket: the grid budget below N (its rule failed or was not judged: N lies above it), none when N is the
  // grid's first ("below the grid"); without N, the grid's last, where the rule did not hold.
  std::optional<int64_t> below;
  std::optional<BudgetOutcome> below_outcome;
  // False where the rule held at some budget below the bracket: it held, failed, then held again up the grid.
  bool monotone = true;
  std::vector<int64_t> held_below;  // those budgets
  std::string pattern;              // every probe in order: "holds at 40, fails at 60, holds from 90 to 400"
  std::string summary;              // one line: N and its bracket, or none, and the pattern where not monotone
};

// `probes` in any order, each grid budget at most once; `grid` ascending.
BudgetVerdict judge_budgets(const std::vector<int64_t>& grid, const std::vector<BudgetProbe>& probes);

// For a row whose every budget trains from scratch (a cosine): the next budget to probe, from the grid's last down
// until the rule first does not hold (which brackets N, and every budget above it was checked); none once done.
std::optional<int64_t> next_budget_down(const std::vector<int64_t>& grid, const std::vector<BudgetProbe>& probes);

}  // namespace stepwise::ablations
