// The budget search's answer for a row, from its probes' outcomes: N is the smallest budget from which the rule holds
// at every budget probed above it, bracketed by the budget below; a row that holds, fails, then holds again up the
// grid says so; a probe that was not judged is never a pass; the scan down the grid stops where the rule first fails.
#include "ablations/judges/budget_verdict.h"

#include <gtest/gtest.h>

namespace stepwise::ablations {
namespace {

using O = BudgetOutcome;

const std::vector<int64_t> kGrid{40, 60, 90, 135, 203};

std::vector<BudgetProbe> probes(std::vector<O> outcomes) {
  std::vector<BudgetProbe> out;
  for (size_t i = 0; i < outcomes.size(); ++i) out.push_back({kGrid[i], outcomes[i]});
  return out;
}

RecordRule rule_with(const std::string& status) {
  RecordRule r;
  r.status = status;
  return r;
}

TEST(BudgetVerdict, NIsTheSmallestBudgetFromWhichTheRuleHoldsBracketedByTheFailureBelow) {
  const auto v = judge_budgets(kGrid, probes({O::Fails, O::Fails, O::Holds, O::Holds, O::Holds}));
  EXPECT_EQ(v.n, 90);
  EXPECT_EQ(v.below, 60);
  EXPECT_EQ(v.below_outcome, O::Fails);
  EXPECT_TRUE(v.monotone);
  EXPECT_EQ(v.pattern, "fails from 40 to 60, holds from 90 to 203");
  EXPECT_EQ(v.summary, "N 90 in (60, 90]: the rule fails at 60");
}

TEST(BudgetVerdict, ARowThatHoldsAt40FailsAt60AndHoldsFrom90IsReportedAsSuch) {
  const auto v = judge_budgets(kGrid, probes({O::Holds, O::Fails, O::Holds, O::Holds, O::Holds}));
  EXPECT_EQ(v.n, 90) << "N above the highest failure: the rule is not taken to hold at 40 on the strength of 90";
  EXPECT_EQ(v.below, 60);
  EXPECT_FALSE(v.monotone);
  EXPECT_EQ(v.held_below, std::vector<int64_t>{40});
  EXPECT_EQ(v.pattern, "holds at 40, fails at 60, holds from 90 to 203");
  EXPECT_NE(v.summary.find("not monotone: holds at 40, fails at 60, holds from 90 to 203"), std::string::npos)
      << v.summary;
}

TEST(BudgetVerdict, HoldingEverywhereIsNBelowTheGridAndFailingAtTheTopIsNone) {
  const auto all = judge_budgets(kGrid, probes({O::Holds, O::Holds, O::Holds, O::Holds, O::Holds}));
  EXPECT_EQ(all.n, 40);
  EXPECT_FALSE(all.below);
  EXPECT_NE(all.summary.find("below the grid"), std::string::npos);
  // The rule failing at the grid's last budget by noise is "none" with what was seen below it, never silently.
  const auto top = judge_budgets(kGrid, probes({O::Holds, O::Holds, O::Holds, O::Holds, O::Fails}));
  EXPECT_FALSE(top.n);
  EXPECT_EQ(top.below, 203);
  EXPECT_EQ(top.pattern, "holds from 40 to 135, fails at 203");
}

TEST(BudgetVerdict, AProbeNotJudgedIsNoPass) {
  // A rule that was not judged (too few seeds, interrupted) is not evidence the rule holds there.
  EXPECT_EQ(outcome_of(rule_with("not judged")), O::NotJudged);
  EXPECT_EQ(outcome_of(rule_with("meets the record rule")), O::Holds);
  EXPECT_EQ(outcome_of(rule_with("does not meet the record rule")), O::Fails);
  std::vector<BudgetProbe> found;
  for (size_t i = 0; i < kGrid.size(); ++i)
    found.push_back({kGrid[i], outcome_of(rule_with(i == 2  ? "not judged"
                                                    : i < 2 ? "does not meet the record rule"
                                                            : "meets the record rule"))});
  const auto v = judge_budgets(kGrid, found);
  EXPECT_EQ(v.n, 135);
  EXPECT_EQ(v.below, 90);
  EXPECT_EQ(v.below_outcome, O::NotJudged);
  EXPECT_EQ(v.summary, "N 135 in (90, 135]: the rule not judged at 90");
}

TEST(BudgetVerdict, TheScanDownTheGridStopsWhereTheRuleFirstDoesNotHold) {
  std::vector<BudgetProbe> seen;
  EXPECT_EQ(next_budget_down(kGrid, seen), 203);
  seen.push_back({203, O::Holds});
  EXPECT_EQ(next_budget_down(kGrid, seen), 135);
  seen.push_back({135, O::Holds});
  seen.push_back({90, O::NotJudged});
  EXPECT_FALSE(next_budget_down(kGrid, seen)) << "a budget not judged bounds N as a failure does";
  const auto v = judge_budgets(kGrid, seen);
  EXPECT_EQ(v.n, 135);
  EXPECT_EQ(v.pattern, "not judged at 90, holds from 135 to 203");
  std::vector<BudgetProbe> failing_top{{203, O::Fails}};
  EXPECT_FALSE(next_budget_down(kGrid, failing_top));
  EXPECT_FALSE(judge_budgets(kGrid, failing_top).n);
}

}  // namespace
}  // namespace stepwise::ablations
