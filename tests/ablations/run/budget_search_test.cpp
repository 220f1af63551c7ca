// The budget search's grid and what budget.json says of a finished search: the geometric grid ends at its bound, and
// each row's N over the baseline's and its seconds at N are intervals from the two brackets, unbounded where a bracket
// is open (below the grid), on probes whose seconds are set so the figures are known.
#include "ablations/run/budget_search.h"

#include <gtest/gtest.h>

namespace stepwise::ablations {
namespace {

TEST(BudgetSearch, TheGeometricGridRoundsUpAndEndsAtItsBound) {
  EXPECT_EQ(geometric_grid(40, 1.5, 400), (std::vector<int64_t>{40, 60, 90, 135, 203, 304, 400}));
  EXPECT_EQ(geometric_grid(1, 1.1, 5), (std::vector<int64_t>{1, 2, 3, 4, 5})) << "each budget one more at least";
  EXPECT_EQ(geometric_grid(40, 2, 40), std::vector<int64_t>{40});
  EXPECT_THROW(geometric_grid(50, 1.0, 400), std::invalid_argument);
  EXPECT_THROW(geometric_grid(50, 1.5, 40), std::invalid_argument);
}

// A probe at n whose seeds' seconds are n / 100 each, and whose rule `holds` or not.
BudgetProbeResult probe(int64_t n, bool holds) {
  BudgetProbeResult p;
  p.budget = n;
  p.rule.status = holds ? "meets the record rule" : "does not meet the record rule";
  p.seconds = {n / 100.0, n / 100.0 + 0.02, n / 100.0 - 0.02};
  return p;
}

RowSearch row(size_t index, const std::vector<int64_t>& grid, const std::vector<bool>& holds) {
  RowSearch r;
  r.index = index;
  r.label = "row " + std::to_string(index);
  std::vector<BudgetProbe> outcomes;
  for (size_t i = 0; i < grid.size(); ++i) {
    r.probes.push_back(probe(grid[i], holds[i]));
    outcomes.push_back({grid[i], outcome_of(r.probes.back().rule)});
  }
  r.verdict = judge_budgets(grid, outcomes);
  return r;
}

TEST(BudgetSearch, NAndSecondsOverTheBaselinesAreIntervalsFromTheTwoBrackets) {
  const std::vector<int64_t> grid{40, 60, 90, 135};
  Suite suite;
  suite.name = "speedrun";
  BudgetSearchOptions options;
  options.grid = grid;
  options.grid_from = "--budget-grid";
  bench::TargetOptions target;
  target.loss = 2.8;
  BudgetSearchOutcome outcome;
  outcome.rows.push_back(row(0, grid, {false, false, true, true}));  // the baseline: N 90 in (60, 90]
  outcome.rows.push_back(row(1, grid, {false, true, true, true}));   // N 60 in (40, 60]
  outcome.rows.push_back(row(2, grid, {true, true, true, true}));    // N 40, below the grid
  outcome.rows.push_back(row(3, grid, {true, true, true, false}));   // none: fails at the grid's last
  const auto doc = budget_json(suite, RunContext{"id", {}, nullptr}, options, target, &outcome);
  const auto& rows = doc["rows"];
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0]["budget"], 90);
  EXPECT_EQ(rows[0]["below"], 60);
  EXPECT_TRUE(rows[0]["n_ratio"].is_null()) << "the baseline is the reference";
  // Seconds at N: the median of the seeds' (0.9), bracketed below by the median at 60 (0.6).
  EXPECT_DOUBLE_EQ(rows[0]["seconds_at_n"]["median"].get<double>(), 0.9);
  EXPECT_DOUBLE_EQ(rows[0]["seconds_at_n"]["low"].get<double>(), 0.6);
  // Row 1's N 60 in (40, 60] against the baseline's 90 in (60, 90]: x0.67 in (40/90, 60/60].
  EXPECT_NEAR(rows[1]["n_ratio"]["ratio"].get<double>(), 60.0 / 90, 1e-12);
  EXPECT_NEAR(rows[1]["steps_ratio"].get<double>(), 60.0 / 90, 1e-12);
  EXPECT_NEAR(rows[1]["n_ratio"]["low"].get<double>(), 40.0 / 90, 1e-12);
  EXPECT_NEAR(rows[1]["n_ratio"]["high"].get<double>(), 60.0 / 60, 1e-12);
  EXPECT_NEAR(rows[1]["seconds_ratio"]["low"].get<double>(), 0.4 / 0.9, 1e-12);
  EXPECT_NEAR(rows[1]["seconds_ratio"]["high"].get<double>(), 0.6 / 0.6, 1e-12);
  // Row 2 holds across the grid: its N is known only to be at most 40, so its ratio's low end is 0.
  EXPECT_EQ(rows[2]["below"], nullptr);
  EXPECT_DOUBLE_EQ(rows[2]["n_ratio"]["low"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(rows[2]["seconds_at_n"]["low"].get<double>(), 0.0);
  EXPECT_EQ(rows[3]["budget"], nullptr);
  EXPECT_TRUE(rows[3]["n_ratio"].is_null());
  EXPECT_EQ(rows[3]["probes"].size(), 4u) << "every probe's verdict is kept, whatever the row's N";
  EXPECT_EQ(rows[3]["probes"][3]["outcome"], "fails");
  EXPECT_EQ(doc["grid"], nlohmann::json(grid));
  EXPECT_EQ(doc["finished"], true);
}

}  // namespace
}  // namespace stepwise::ablations
