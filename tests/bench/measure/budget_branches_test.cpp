// The budget search's branches: one line of training per seed, each budget's cool-down branched off it, gives each
// budget the run --step-budget gives from scratch, within the exact class's tolerance (the same weights, optimizer
// state, batches and dropout stream: only rounding could differ), for the trapezoid and a constant rate, AdamW and
// Muon; a cosine is refused; and a grid costs at most about twice its longest budget.
#include "bench/measure/budget_branches.h"
#include "bench/tokens.h"
#include "tests/support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

namespace stepwise::bench {
namespace {

// The exact class's relative tolerance on a loss (ablations/judges/loss_check.cpp: tolerance_for(MathClass::Exact)).
constexpr double kExactRel = 1e-4;

using testing::Streams;

Streams synthetic(const RunConfig& c) { return testing::synthetic_streams(c); }

RunConfig trapezoid() {
  auto c = testing::tiny_cpu_run();
  c.model.dropout(0.1);  // on: a branch must put dropout's stream back too
  c.adamw.lr(3e-3);
  c.lr_schedule.kind = LrScheduleKind::Trapezoid;
  c.lr_schedule.warmup_steps = 2;
  return c;
}

TargetOptions options() {
  TargetOptions o;
  o.loss = 9.0;  // crossed on the way by some budgets, not by others
  o.eval_every = 4;
  o.eval_batches = 2;
  o.max_steps = 100;
  o.max_time_s = 600;
  o.warmup_steps = 2;
  return o;
}

// `c` trained from scratch to budget n: its schedule ends there and every seed trains all of it.
SeedRun from_scratch(RunConfig c, const Streams& data, int64_t n) {
  auto o = options();
  o.step_budget = n;
  c.lr_schedule.decay_steps = n;
  return train_to_target(c, data.train, data.val, o);
}

bool close(double a, double b) { return std::abs(a - b) <= kExactRel * std::abs(b); }

void expect_same_run(const SeedRun& branched, const SeedRun& scratch, int64_t n) {
  ASSERT_EQ(branched.status, "ok") << branched.reason.value_or("");
  ASSERT_EQ(scratch.status, "ok") << scratch.reason.value_or("");
  EXPECT_EQ(branched.stop_reason, scratch.stop_reason) << "budget " << n;
  EXPECT_EQ(branched.reached, scratch.reached) << "budget " << n;
  EXPECT_EQ(branched.steps, scratch.steps) << "budget " << n;
  ASSERT_EQ(branched.curve.size(), scratch.curve.size()) << "budget " << n;
  for (size_t i = 0; i < scratch.curve.size(); ++i) {
    EXPECT_EQ(branched.curve[i].step, scratch.curve[i].step) << "budget " << n;
    EXPECT_TRUE(close(branched.curve[i].val_loss, scratch.curve[i].val_loss))
        << "budget " << n << " step " << scratch.curve[i].step << ": " << branched.curve[i].val_loss << " vs "
        << scratch.curve[i].val_loss;
    ASSERT_EQ(branched.curve[i].train_loss.has_value(), scratch.curve[i].train_loss.has_value());
    if (scratch.curve[i].train_loss)
      EXPECT_TRUE(close(*branched.curve[i].train_loss, *scratch.curve[i].train_loss)) << "budget " << n;
  }
  ASSERT_EQ(branched.step_losses.size(), static_cast<size_t>(n));
  for (size_t i = 0; i < scratch.step_losses.size(); ++i)
    EXPECT_TRUE(close(branched.step_losses[i], scratch.step_losses[i])) << "budget " << n << " step " << i + 1;
  // Its seconds are its own N steps': the line's up to the branch point, then its cool-down's.
  EXPECT_EQ(branched.curve.back().step, n);
  EXPECT_NEAR(branched.curve.back().time_s,
              std::accumulate(branched.step_ms.begin(), branched.step_ms.end(), 0.0) / 1000, 1e-9);
}

void expect_branches_match_scratch(const RunConfig& c, const std::vector<int64_t>& budgets) {
  const auto data = synthetic(c);
  const auto branched = train_to_budgets(c, data.train, data.val, options(), budgets);
  ASSERT_EQ(branched.size(), budgets.size());
  for (size_t i = 0; i < budgets.size(); ++i)
    expect_same_run(branched[i], from_scratch(c, data, budgets[i]), budgets[i]);
}

TEST(BudgetBranches, EachTrapezoidBudgetGetsTheRunItGetsFromScratch) {
  // Branch points 6, 9 and 12 (the cool-down 0.4 of each budget), none on the grid of 4: pauses mid-stretch.
  expect_branches_match_scratch(trapezoid(), {10, 15, 21});
}

TEST(BudgetBranches, MuonAndItsAdamGroupsArePutBackToo) {
  auto c = trapezoid();
  c.muon = true;
  c.muon_options.ns_dtype(MuonNsDtype::Float32);
  c.fused_adamw = true;  // the fused kernel's device step counts
  expect_branches_match_scratch(c, {9, 14});
}

TEST(BudgetBranches, AConstantRateBranchesAtEachBudgetItself) {
  auto c = trapezoid();
  c.lr_schedule.kind = LrScheduleKind::Constant;
  EXPECT_EQ(branch_point(c.lr_schedule, 10), 10);
  expect_branches_match_scratch(c, {6, 10, 13});
}

TEST(BudgetBranches, ACosineCannotBranchAndSaysWhy) {
  auto c = trapezoid();
  c.lr_schedule.kind = LrScheduleKind::Cosine;
  ASSERT_TRUE(cannot_branch(c).has_value());
  EXPECT_NE(cannot_branch(c)->find("from scratch"), std::string::npos);
  EXPECT_EQ(branched_steps(c.lr_schedule, {40, 60, 90}), 190);
  const auto data = synthetic(c);
  EXPECT_THROW(train_to_budgets(c, data.train, data.val, options(), {4, 8}), std::invalid_argument);
}

TEST(BudgetBranches, AGridCostsAboutTwiceItsLongestBudget) {
  // The README's grid (geometric from 40 at ratio 1.5 to 400) on the trapezoid's default cool-down: the longest
  // budget's 400 steps and each shorter one's cool-down, 0.4 of it.
  const auto c = trapezoid();
  const std::vector<int64_t> grid{40, 60, 90, 135, 203, 304, 400};
  const auto steps = branched_steps(c.lr_schedule, grid);
  EXPECT_EQ(steps, 400 + 16 + 24 + 36 + 54 + 81 + 122);
  EXPECT_LE(steps, 2 * 400) << "a whole search of one row costs at most twice one run at its largest budget";
}

TEST(BudgetBranches, ASeedTheCapStopsRecordsTheStopForEveryBudgetBeyondIt) {
  auto c = trapezoid();
  const auto data = synthetic(c);
  auto o = options();
  o.max_steps = 12;  // the line stops at 12: budget 10 branches at 6 and ends; 20 and 30 are never reached
  const auto runs = train_to_budgets(c, data.train, data.val, o, {10, 20, 30});
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].curve.back().step, 10);
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(runs[i].status, "ok");
    EXPECT_EQ(runs[i].stop_reason, "max_steps");
    EXPECT_LT(runs[i].curve.back().step, 20);
  }
}

}  // namespace
}  // namespace stepwise::bench
