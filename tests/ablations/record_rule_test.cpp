// The speedrun's record rule: the budget is --step-budget or the upper median of steps to target (a step a seed was
// evaluated at), the loss at the budget is read from the evaluation exactly there or measured by a re-run (never the
// last evaluation before it), and the one-sided t-test decides against record_p; too few seeds and diverged seeds
// say so.
#include "ablations/record_rule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

namespace stepwise::ablations {
namespace {

// A seed evaluated every 10 steps with the loss falling 0.01 per step from 8 (so the loss at step s is 8 - s / 100,
// shifted by `offset`), stopped at `stop` steps; reached at the first evaluation at or below `target`.
bench::SeedRun seed(uint64_t id, int64_t stop, double target, double offset = 0) {
  bench::SeedRun r;
  r.seed = id;
  r.stop_reason = "max_steps";
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

bench::TargetOptions target(double loss) {
  bench::TargetOptions o;
  o.loss = loss;
  o.eval_every = 10;
  o.max_steps = 1000;
  return o;
}

// A re-run that must not happen.
const BudgetRerun kNoRerun = [](const bench::SeedRun& s, const bench::TargetOptions&) -> bench::SeedRun {
  ADD_FAILURE() << "seed " << s.seed << " re-run";
  return {};
};

TEST(RecordRule, TheBudgetIsTheUpperMedianOfStepsToTarget) {
  // Steps to target 100, 120, 140, 160: the upper median is 140 (the lower 120, the mean of the two 130, which no
  // seed was evaluated at).
  std::vector<bench::SeedRun> seeds;
  for (double offset : {0.0, 0.2, 0.4, 0.6}) seeds.push_back(seed(seeds.size(), 200, 7.0, offset));
  EXPECT_EQ(*budget_for(target(7.0), seeds), 140);
  seeds.pop_back();  // 100, 120, 140: the median
  EXPECT_EQ(*budget_for(target(7.0), seeds), 120);
  auto given = target(7.0);
  given.step_budget = 50;
  EXPECT_EQ(*budget_for(given, seeds), 50);
  EXPECT_FALSE(budget_for(target(1.0), {seed(0, 200, 1.0), seed(1, 200, 1.0)})) << "no seed reached 1.0";
}

TEST(RecordRule, TheLossAtTheBudgetIsTheEvaluationExactlyThereNotTheLastOne) {
  // Every seed trained on to step 200 (as with --step-budget): the loss at 140 is read from the curve, not its end.
  auto options = target(7.0);
  options.step_budget = 140;
  std::vector<bench::SeedRun> seeds{seed(0, 200, 7.0), seed(1, 200, 7.0, 0.001), seed(2, 200, 7.0, -0.002)};
  const auto rule = judge_record_rule(options, seeds, kNoRerun);
  ASSERT_EQ(rule.losses.size(), 3u);
  EXPECT_DOUBLE_EQ(*rule.losses[0].loss, 8 - 1.4);
  EXPECT_EQ(rule.losses[0].source, "trained");
  EXPECT_EQ(rule.budget_from, "--step-budget");
  EXPECT_EQ(rule.reruns, 0u);
  EXPECT_NEAR(*rule.mean, 6.6 - 0.001 / 3, 1e-12);
}

TEST(RecordRule, ASeedThatStoppedBeforeTheBudgetIsReRunToExactlyIt) {
  // Reached at 100, 120, 140 and stopped there: the budget is 120, so the first seed has no evaluation at it.
  std::vector<bench::SeedRun> seeds;
  for (double offset : {0.0, 0.2, 0.4})
    seeds.push_back(seed(seeds.size(), 100 + std::lround(offset * 100), 7.0, offset));
  std::map<uint64_t, bench::TargetOptions> asked;
  const BudgetRerun rerun = [&](const bench::SeedRun& s, const bench::TargetOptions& o) {
    asked[s.seed] = o;
    return seed(s.seed, o.max_steps, o.loss);  // seed 0's own trajectory (offset 0)
  };
  const auto rule = judge_record_rule(target(7.0), seeds, rerun);
  EXPECT_EQ(*rule.budget, 120);
  ASSERT_EQ(asked.size(), 1u);
  ASSERT_TRUE(asked.count(0));
  EXPECT_EQ(asked[0].max_steps, 120);
  EXPECT_EQ(asked[0].eval_every, 120) << "one evaluation, at the budget";
  EXPECT_EQ(asked[0].loss, 7.0) << "the target kept: only the evaluation at the budget could meet it";
  EXPECT_FALSE(asked[0].step_budget);
  EXPECT_EQ(rule.losses[0].source, "re-run");
  EXPECT_DOUBLE_EQ(*rule.losses[0].loss, 8 - 1.2) << "the re-run's loss at 120, not the seed's last (at 100)";
  EXPECT_EQ(rule.losses[1].source, "trained");
  EXPECT_EQ(rule.reruns, 1u);
}

TEST(RecordRule, TheOneSidedTestDecidesAgainstRecordP) {
  auto options = target(6.8);
  options.step_budget = 100;
  std::vector<bench::SeedRun> seeds;
  // Losses at 100: 7 - {0.29, 0.26, 0.31, 0.27, 0.30} = 6.71, 6.74, 6.69, 6.73, 6.70; scipy: p 0.000376 below 6.8.
  for (double offset : {-0.29, -0.26, -0.31, -0.27, -0.30}) seeds.push_back(seed(seeds.size(), 100, 0, offset));
  const auto rule = judge_record_rule(options, seeds, kNoRerun);
  EXPECT_EQ(rule.n, 5u);
  EXPECT_NEAR(*rule.p, 0.0003759987138531313, 1e-9);
  EXPECT_EQ(rule.status, "meets the record rule") << rule.reason;
  options.loss = 6.72;  // scipy: p 0.276
  const auto near = judge_record_rule(options, seeds, kNoRerun);
  EXPECT_NEAR(*near.p, 0.27644471696672945, 1e-9);
  EXPECT_EQ(near.status, "does not meet the record rule");
  options.loss = 6.8;
  options.record_p = 0.0001;  // a stricter level than the evidence
  EXPECT_EQ(judge_record_rule(options, seeds, kNoRerun).status, "does not meet the record rule");
}

TEST(RecordRule, TooFewSeedsOrNoBudgetIsNotJudged) {
  auto options = target(7.0);
  const auto one = judge_record_rule(options, {seed(0, 200, 7.0)}, kNoRerun);
  EXPECT_EQ(one.status, "not judged");
  EXPECT_NE(one.reason.find("fewer than 2"), std::string::npos) << one.reason;
  const auto none = judge_record_rule(target(1.0), {seed(0, 200, 1.0), seed(1, 200, 1.0)}, kNoRerun);
  EXPECT_EQ(none.status, "not judged");
  EXPECT_FALSE(none.budget);
  EXPECT_EQ(none.budget_from, "none");
}

TEST(RecordRule, ADivergedSeedFailsTheRule) {
  auto options = target(7.0);
  options.step_budget = 150;
  auto diverged = seed(2, 80, 7.0);
  diverged.stop_reason = "diverged";
  const auto rule = judge_record_rule(options, {seed(0, 200, 7.0), seed(1, 200, 7.0), diverged}, kNoRerun);
  EXPECT_EQ(rule.status, "does not meet the record rule");
  EXPECT_EQ(rule.losses[2].source, "missing");
}

}  // namespace
}  // namespace stepwise::ablations
