// The convergence guard: a flag that keeps the math converges as the baseline does; slower or faster at p < 0.05 is
// flagged with the test's figures; bf16 and a different batch are reported, not judged; too few seeds say so.
#include "ablations/judges/convergence_guard.h"

#include <gtest/gtest.h>

namespace stepwise::ablations {
namespace {

std::vector<bench::SeedRun> runs(std::vector<std::optional<int64_t>> steps) {
  std::vector<bench::SeedRun> out;
  for (const auto& s : steps) {
    bench::SeedRun r;
    r.reached = s.has_value();
    r.steps = s;
    if (s) r.time_s = static_cast<double>(*s) / 10;
    out.push_back(r);
  }
  return out;
}

TEST(ConvergenceGuard, TheSameStepsToTargetAreOk) {
  const auto v = judge_convergence(runs({100, 110, 105}), runs({105, 100, 110}), MathClass::Fp32, false, 1000);
  EXPECT_EQ(v.status, "ok") << v.reason;
  EXPECT_NEAR(*v.steps_ratio, 1.0, 1e-12);
  EXPECT_GT(*v.p, 0.05);
}

TEST(ConvergenceGuard, SlowerAndFasterAreBothFlaggedWithTheTest) {
  const auto baseline = runs({100, 104, 98});
  const auto slower = judge_convergence(runs({200, 210, 196}), baseline, MathClass::Exact, false, 1000);
  EXPECT_EQ(slower.status, "slower to converge") << slower.reason;
  EXPECT_LT(*slower.p, 0.05);
  EXPECT_NE(slower.reason.find("Welch's t"), std::string::npos);
  const auto faster = judge_convergence(runs({60, 64, 58}), baseline, MathClass::Fp32, false, 1000);
  EXPECT_EQ(faster.status, "faster to converge") << faster.reason;
}

TEST(ConvergenceGuard, ASeedThatNeverArrivesCountsAtTheCapAndIsNamed) {
  const auto v = judge_convergence(runs({std::nullopt, std::nullopt, std::nullopt}), runs({100, 104, 98}),
                                   MathClass::Fp32, false, 400);
  EXPECT_EQ(v.status, "slower to converge") << v.reason;
  EXPECT_EQ(v.not_reached, 3u);
  EXPECT_NE(v.reason.find("400-step cap"), std::string::npos) << v.reason;
}

TEST(ConvergenceGuard, Bf16AndABatchChangeAreReportedNotJudged) {
  const auto baseline = runs({100, 104, 98});
  EXPECT_EQ(judge_convergence(runs({200, 210, 196}), baseline, MathClass::Bf16, false, 1000).status, "not judged");
  EXPECT_EQ(judge_convergence(runs({50, 52, 49}), baseline, MathClass::Batch, false, 1000).status, "not judged");
}

TEST(ConvergenceGuard, ALearningFlagIsFasterOrSlowerToTargetNeverAFault) {
  // The speedrun's flags change the function on purpose: the guard gives their result with the test, in words that
  // are not a failure's.
  const auto baseline = runs({100, 104, 98});
  const auto faster = judge_convergence(runs({60, 64, 58}), baseline, MathClass::Learning, false, 1000);
  EXPECT_EQ(faster.status, "faster to target") << faster.reason;
  EXPECT_LT(*faster.p, 0.05);
  EXPECT_EQ(judge_convergence(runs({200, 210, 196}), baseline, MathClass::Learning, false, 1000).status,
            "slower to target");
  EXPECT_EQ(judge_convergence(runs({101, 99, 105}), baseline, MathClass::Learning, false, 1000).status,
            "no difference");
}

// Seeds trained to the horizon 200: those that missed the target are censored there, never judged on the others.
std::vector<bench::SeedRun> to_horizon(std::vector<std::optional<int64_t>> steps) {
  auto out = runs(steps);
  for (auto& r : out) {
    r.curve.push_back({0, 0, 0, 9, std::nullopt});
    r.curve.push_back({200, 0, 20, r.reached ? 2.0 : 3.0, std::nullopt});
  }
  return out;
}

TEST(ConvergenceGuard, TwoOfFiveReachingIsNotFasterThanABaselineWhoseFiveReach) {
  // The two that reached did so in under half the baseline's steps; the other three never crossed by the horizon,
  // where every baseline seed had. Gehan's test over all five: not faster.
  const auto v = judge_convergence(to_horizon({50, 60, std::nullopt, std::nullopt, std::nullopt}),
                                   to_horizon({150, 155, 160, 145, 165}), MathClass::Learning, false, 1000);
  EXPECT_NE(v.status, "faster to target") << v.reason;
  EXPECT_GT(*v.p, 0.05);
  EXPECT_NE(v.test.find("Gehan"), std::string::npos);
  EXPECT_NE(v.reason.find("reached 2/5 vs 5/5"), std::string::npos) << v.reason;
  EXPECT_EQ(v.not_reached, 3u);
  EXPECT_EQ(v.steps[2], 200) << "censored at the horizon it trained to, not the step cap 1000";
  // The same two against the baseline with the three that missed left out would have been "faster".
  EXPECT_EQ(
      judge_convergence(to_horizon({50, 60}), to_horizon({150, 155, 160, 145, 165}), MathClass::Learning, false, 1000)
          .status,
      "faster to target");
}

TEST(ConvergenceGuard, ASeedThatMissedIsCountedAtTheHorizonItTrainedToAndTheReasonSaysSo) {
  // Censored at the 200-step horizon, not the 1000-step cap: the reason names where they were counted.
  const auto v = judge_convergence(to_horizon({100, std::nullopt, 110}), to_horizon({100, 104, 98}), MathClass::Fp32,
                                   false, 1000, 200);
  EXPECT_NE(v.reason.find("counted at the 200-step horizon"), std::string::npos) << v.reason;
  EXPECT_EQ(v.reason.find("cap"), std::string::npos) << v.reason;
}

TEST(ConvergenceGuard, ThreeAgainstThreeWithAMissIsNotJudgedWithTheSeedsItWouldNeed) {
  // Gehan's exact test at 3 vs 3 cannot go below 2/20 = 0.1 whatever the seeds did: the guard could only ever say
  // "no difference", which would be the test's size speaking, not the rows.
  const auto v = judge_convergence(to_horizon({50, 60, std::nullopt}), to_horizon({150, 155, 160}), MathClass::Learning,
                                   false, 1000, 200);
  EXPECT_EQ(v.status, "not judged") << v.reason;
  EXPECT_NE(v.reason.find("cannot go below p = 0.1"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("4 seeds a side"), std::string::npos) << v.reason;
  // At 4 against 4 the same split can reach the level: judged.
  const auto four = judge_convergence(to_horizon({50, 60, 55, 65}), to_horizon({150, 155, 160, std::nullopt}),
                                      MathClass::Learning, false, 1000, 200);
  EXPECT_EQ(four.status, "faster to target") << four.reason;
}

TEST(ConvergenceGuard, OneSeedIsTooFewAndSaysHowMany) {
  const auto v = judge_convergence(runs({100}), runs({100, 104}), MathClass::Fp32, false, 1000);
  EXPECT_EQ(v.status, "not judged");
  EXPECT_NE(v.reason.find("--target-seeds=3"), std::string::npos);
}

}  // namespace
}  // namespace stepwise::ablations
