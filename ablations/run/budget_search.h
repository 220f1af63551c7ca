// ./ablate --find-budget: the speedrun's way of setting a record's N, asked of every row of a suite trained to a
// target (docs/convergence.md#the-budget-search). On a stated grid of budgets, each row's record rule at each budget
// it probes (every seed trained all N steps on a schedule that ends at N, the loss at N below the target by a
// one-sided t-test): its N is the smallest budget from which the rule holds at every budget probed above it, bracketed
// by the budget below (ablations/judges/budget_verdict.h). A row on the trapezoid (or a constant rate) trains one line
// per seed and branches each budget's cool-down off it (bench/measure/budget_branches.h), so every budget of the grid
// is probed at about twice the longest's cost; a row whose schedule decays from its first step (the cosine) trains
// each budget from scratch, from the grid's last down to the first budget where the rule does not hold. Each probe
// is a result document of its own (budget_<N>/ under the search's folder), and budget.json keeps the search.
#pragma once

#include "ablations/judges/budget_verdict.h"
#include "ablations/judges/record_rule.h"
#include "ablations/run/plan.h"
#include "ablations/run/result_document.h"
#include "ablations/run/suite.h"
#include "bench/tokens.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stepwise::ablations {

// first, first x ratio, first x ratio^2, ... rounded up to whole steps, each at least one more than the one before,
// up to and always ending at `last`. Throws std::invalid_argument unless 1 <= first <= last and ratio > 1.
std::vector<int64_t> geometric_grid(int64_t first, double ratio, int64_t last);

struct BudgetSearchOptions {
  std::vector<int64_t> grid;     // ascending, within --max-steps
  std::string grid_from;         // how it was stated: "--budget-grid", or "geometric from 40 at ratio 1.5 to 400"
  bool branches = true;          // --budget-branches=off: every budget from scratch, as the check of the branches
  std::filesystem::path folder;  // budget.json and budget_<N>/ go here
  bool progress = true;
  std::shared_ptr<const bench::Tokens> val_tokens;
  std::vector<std::string> command_line;  // recorded in budget.json
};

// One probe: a row's record rule at one budget, and the timed seconds of each seed's N steps.
struct BudgetProbeResult {
  int64_t budget = 0;
  RecordRule rule;
  std::vector<double> seconds;  // each seed that trained all N steps: its timed seconds to step N
  nlohmann::json document;      // the probe's result document, as written
};

struct RowSearch {
  size_t index = 0;
  std::string label;
  std::vector<std::string> added;          // the flags the row adds (a report matches published rows by them)
  std::optional<std::string> skip_reason;  // the row was not searched
  bool branched = false;
  std::optional<std::string> from_scratch;  // why each budget trained from scratch (a cosine, --budget-branches=off)
  int64_t steps_per_seed = 0;               // the training steps the search took per seed
  double wall_s = 0;                        // the row's search, start to end (evaluations and warm-ups included)
  std::vector<BudgetProbeResult> probes;    // ascending by budget
  BudgetVerdict verdict;
};

struct BudgetSearchOutcome {
  std::vector<RowSearch> rows;
  bool interrupted = false;
  size_t failed = 0;  // probes whose every seed failed
  double wall_s = 0;
};

// Searches every planned row of `suite` (their target options set; the search sets each probe's horizon), writing
// each probe's result document under options.folder as it is judged, and a progress line per probe.
BudgetSearchOutcome find_budgets(const Suite& suite, const std::vector<PlannedConfig>& planned,
                                 const RunContext& context, std::shared_ptr<const bench::Tokens> tokens,
                                 const BudgetSearchOptions& options);

// The search as ./ablate --find-budget runs it: budget.json written as it starts (the search under way) and again at
// the end, every row searched, its tables printed by ./report show (ablations/run/report_tables.h).
BudgetSearchOutcome run_budget_search(const Suite& suite, const std::vector<PlannedConfig>& planned,
                                      const RunContext& context, std::shared_ptr<const bench::Tokens> tokens,
                                      const bench::TargetOptions& target, const BudgetSearchOptions& options);

// --dry-run --json's budget_search: the grid, and per row whether it branches (with the training steps a seed then
// takes, bench::branched_steps) or trains each budget from scratch (and why), so ./run_all.sh's plan can cost it.
nlohmann::json budget_plan_json(const std::vector<PlannedConfig>& planned, const std::vector<int64_t>& grid,
                                bool branches);
// The same for a person, under --dry-run's startup table.
std::string budget_plan_text(const std::vector<PlannedConfig>& planned, const std::string& grid_from,
                             const std::vector<int64_t>& grid, bool branches);

// budget.json: the grid and how it was stated, and per row its N, bracket, pattern, every probe's verdict (mean,
// sd, n, t, p), the seconds at N with their bracket, and N and seconds over the baseline's as intervals from the two
// brackets (reports/stepwise_report/read/budget_file.py reads it, render/budget_search.py draws it;
// docs/convergence.md lists its keys). `outcome` null: the search under way (written when it starts).
nlohmann::json budget_json(const Suite& suite, const RunContext& context, const BudgetSearchOptions& options,
                           const bench::TargetOptions& target, const BudgetSearchOutcome* outcome);

}  // namespace stepwise::ablations
