// The speedrun's record rule at one budget fixed before the runs: the loss at the declared budget is read from the
// evaluation exactly there (never the last evaluation, never a row's own median of steps to target), and the
// one-sided t-test decides against record_p; no declared budget, too few seeds and diverged seeds say so. The seeds
// are synthetic: each curve's loss at the budget is set, so the test's figures are known (scipy's ttest_1samp).
#include "ablations/judges/record_rule.h"

#include <gtest/gtest.h>

#include <cmath>

namespace stepwise::ablations {
namespace {

// A seed evaluated every 10 steps with the loss falling 0.01 per step from 8 (so the loss at step s is 8 - s / 100,
// shifted by `offset`), trained to `stop` steps; reached at the first evaluation at or below `target`.
bench::SeedRun seed(uint64_t id, int64_t stop, double target, double offset = 0) {
  bench::SeedRun r;
  r.seed = id;
  r.stop_reason = "step_budget";
  for (int64_t s = 0; s <= stop; s += 10) {
    const double loss = 8 - static_cast<double>(s) / 100 + offset;
    r.curve.push_back({s, s * 64, static_cast<double>(s) / 10, loss, std::nullopt});
    if (!r.reached && loss <= target) {
      r.reached = true;
      r.stop_reason = "target";
      r.steps = s;
      r.tokens = s * 64;
      r.time_s = static_cast<double>(s) / 10;
    }
  }
  return r;
}

bench::TargetOptions target(double loss, std::optional<int64_t> budget) {
  bench::TargetOptions o;
  o.loss = loss;
  o.eval_every = 10;
  o.max_steps = 1000;
  o.step_budget = budget;
  o.budget_from = budget ? "--step-budget" : "none declared";
  return o;
}

TEST(RecordRule, TheLossAtTheBudgetIsTheEvaluationExactlyThereNotTheLastOne) {
  // Every seed trained on to step 200: the loss at the budget 140 is read from the curve, not its end.
  std::vector<bench::SeedRun> seeds{seed(0, 200, 7.0), seed(1, 200, 7.0, 0.001), seed(2, 200, 7.0, -0.002)};
  const auto rule = judge_record_rule(target(7.0, 140), seeds);
  ASSERT_EQ(rule.losses.size(), 3u);
  EXPECT_DOUBLE_EQ(*rule.losses[0].loss, 8 - 1.4);
  EXPECT_EQ(rule.losses[0].source, "trained");
  EXPECT_EQ(*rule.budget, 140);
  EXPECT_EQ(rule.budget_from, "--step-budget");
  EXPECT_NEAR(*rule.mean, 6.6 - 0.001 / 3, 1e-12);
}

// The fixed budget, five synthetic seeds whose losses at it are set: the rule passes at p < 0.01 when the mean lies
// clearly below the target, and fails when the mean sits on the target (as it did at a row's own median of steps to
// target, where about half the seeds are still above it).
TEST(RecordRule, AtAFixedBudgetItPassesBelowTheTargetAndFailsWhenTheMeanSitsOnIt) {
  std::vector<bench::SeedRun> below;
  // Losses at 100: 7 - {0.29, 0.26, 0.31, 0.27, 0.30} = 6.71, 6.74, 6.69, 6.73, 6.70; scipy: p 0.000376 below 6.8.
  for (double offset : {-0.29, -0.26, -0.31, -0.27, -0.30}) below.push_back(seed(below.size(), 100, 6.8, offset));
  const auto passes = judge_record_rule(target(6.8, 100), below);
  EXPECT_EQ(passes.n, 5u);
  EXPECT_NEAR(*passes.p, 0.0003759987138531313, 1e-9);
  EXPECT_EQ(passes.status, "meets the record rule") << passes.reason;

  // Mean exactly on the target: 6.8 + {-0.03, -0.01, 0, 0.01, 0.03}; t = 0, p = 0.5.
  std::vector<bench::SeedRun> on;
  for (double offset : {-0.23, -0.21, -0.2, -0.19, -0.17}) on.push_back(seed(on.size(), 100, 6.8, offset));
  const auto fails = judge_record_rule(target(6.8, 100), on);
  EXPECT_NEAR(*fails.mean, 6.8, 1e-12);
  EXPECT_NEAR(*fails.p, 0.5, 1e-9);
  EXPECT_EQ(fails.status, "does not meet the record rule") << fails.reason;

  auto near = target(6.72, 100);  // scipy: p 0.276
  EXPECT_NEAR(*judge_record_rule(near, below).p, 0.27644471696672945, 1e-9);
  auto strict = target(6.8, 100);
  strict.record_p = 0.0001;  // a stricter level than the evidence
  EXPECT_EQ(judge_record_rule(strict, below).status, "does not meet the record rule");
}

TEST(RecordRule, WithoutADeclaredBudgetNothingIsJudgedWhateverTheSeedsStepsToTarget) {
  std::vector<bench::SeedRun> seeds{seed(0, 200, 7.0), seed(1, 200, 7.0, 0.2), seed(2, 200, 7.0, 0.4)};
  const auto none = judge_record_rule(target(7.0, std::nullopt), seeds);
  EXPECT_EQ(none.status, "not judged");
  EXPECT_FALSE(none.budget) << "a row's own median of steps to target is never its budget";
  EXPECT_NE(none.reason.find("--step-budget"), std::string::npos) << none.reason;
  const auto one = judge_record_rule(target(7.0, 100), {seed(0, 200, 7.0)});
  EXPECT_EQ(one.status, "not judged");
  EXPECT_NE(one.reason.find("fewer than 2"), std::string::npos) << one.reason;
}

TEST(RecordRule, ADivergedSeedFailsTheRuleAndOneStoppedShortIsMissing) {
  auto diverged = seed(2, 80, 7.0);
  diverged.stop_reason = "diverged";
  const auto rule = judge_record_rule(target(7.0, 150), {seed(0, 200, 7.0), seed(1, 200, 7.0), diverged});
  EXPECT_EQ(rule.status, "does not meet the record rule");
  EXPECT_EQ(rule.losses[2].source, "missing");
  auto timed_out = seed(2, 80, 7.0);
  timed_out.stop_reason = "max_time";
  const auto short_one = judge_record_rule(target(7.0, 150), {seed(0, 200, 7.0), seed(1, 200, 7.0), timed_out});
  EXPECT_EQ(short_one.losses[2].source, "missing");
  EXPECT_NE(short_one.losses[2].reason->find("max_time"), std::string::npos);
  EXPECT_EQ(short_one.n, 2u);
}

TEST(RecordRule, ASeedStoppedBeforeTheBudgetMakesTheRuleNotMetNeverJudgedOnTheOthers) {
  // The two that trained all 150 steps are well below the target; judged on them alone the row would meet the rule.
  // A record's every run trains all N steps: one that the time cap stopped at 80 leaves the row short of it.
  auto timed_out = seed(2, 80, 7.0);
  timed_out.stop_reason = "max_time";
  const auto rule = judge_record_rule(target(7.0, 150), {seed(0, 200, 7.0, -0.3), seed(1, 200, 7.0, -0.31), timed_out});
  EXPECT_EQ(rule.status, "does not meet the record rule") << rule.reason;
  EXPECT_NE(rule.reason.find("1 of 3 seeds have no validation loss at step 150"), std::string::npos) << rule.reason;
  EXPECT_FALSE(rule.p) << "no test on the others";
  auto failed = seed(2, 0, 7.0);
  failed.status = "failed";
  failed.reason = "out of memory";
  EXPECT_EQ(judge_record_rule(target(7.0, 150), {seed(0, 200, 7.0, -0.3), seed(1, 200, 7.0, -0.31), failed}).status,
            "does not meet the record rule");
  auto interrupted = timed_out;
  interrupted.stop_reason = "interrupted";
  EXPECT_EQ(
      judge_record_rule(target(7.0, 150), {seed(0, 200, 7.0, -0.3), seed(1, 200, 7.0, -0.31), interrupted}).status,
      "not judged");
}

}  // namespace
}  // namespace stepwise::ablations
