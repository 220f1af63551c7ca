// Time and steps to target against the baseline: the ratio of Kaplan-Meier medians, its seeded bootstrap interval (the
// same on every call), Gehan's exact p, every seed that ran counted (one that missed censored where it stopped, never
// dropped), and nothing from one seed a side.
#include "ablations/judges/target_verdict.h"

#include "bench/measure/censored.h"

#include <gtest/gtest.h>

namespace stepwise::ablations {
namespace {

// Seeds reaching the target at `steps` (nullopt: trained to `horizon` without crossing), `seconds_per_step` each.
std::vector<bench::SeedRun> runs(std::vector<std::optional<int64_t>> steps, double seconds_per_step,
                                 int64_t horizon = 300) {
  std::vector<bench::SeedRun> out;
  for (const auto& s : steps) {
    bench::SeedRun r;
    r.reached = s.has_value();
    r.steps = s;
    if (s) r.time_s = static_cast<double>(*s) * seconds_per_step;
    r.stop_reason = s ? "target" : "step_budget";
    r.curve.push_back({0, 0, 0, 9, std::nullopt});
    r.curve.push_back({horizon, 0, static_cast<double>(horizon) * seconds_per_step, 3, std::nullopt});
    out.push_back(r);
  }
  return out;
}

std::vector<bench::Censored> reached(std::vector<double> v) {
  std::vector<bench::Censored> out;
  for (double x : v) out.push_back({x, true});
  return out;
}

TEST(TargetVerdict, SlowerIsShownAsItIsWithItsIntervalAndWelchsPWhereEverySeedReached) {
  // Steps 10..14 (median 12) against 20..25 (median 22.5): x0.533. scipy.stats.ttest_ind(a, b, equal_var=False).
  const auto v = ratio_verdict(reached({10, 11, 12, 13, 14}), reached({20, 21, 22, 23, 24, 25}));
  EXPECT_NEAR(*v.ratio, 12.0 / 22.5, 1e-12);
  EXPECT_NEAR(*v.p, 3.3562185586157048e-06, 1e-12);
  ASSERT_TRUE(v.low && v.high);
  EXPECT_LE(*v.low, *v.ratio);
  EXPECT_GE(*v.high, *v.ratio);
  EXPECT_GE(*v.low, 10.0 / 25.0) << "no resample can go below min/max";
  EXPECT_LE(*v.high, 14.0 / 20.0);
  EXPECT_EQ(v.n, 5u);
  EXPECT_EQ(v.baseline_n, 6u);
  const auto slower = ratio_verdict(reached({20, 21, 22, 23, 24, 25}), reached({10, 11, 12, 13, 14}));
  EXPECT_NEAR(*slower.ratio, 22.5 / 12.0, 1e-12);
  EXPECT_GT(*slower.low, 1.0);
  const auto again = ratio_verdict(reached({10, 11, 12, 13, 14}), reached({20, 21, 22, 23, 24, 25}));
  EXPECT_EQ(*again.low, *v.low);
  EXPECT_EQ(*again.high, *v.high);
}

TEST(TargetVerdict, ASeedThatMissedIsCensoredAtTheHorizonNotDropped) {
  // 3 of 4 reached; the fourth trained to the horizon 300 without crossing. Its median is Kaplan-Meier's (S: 0.75,
  // 0.5 at 110, so the midpoint to 120), not the median of the three that reached.
  const auto v = judge_against_baseline(runs({100, std::nullopt, 120, 110}, 0.5), runs({200, 220, 210}, 0.25));
  EXPECT_EQ(v.steps.n, 3u);
  EXPECT_EQ(v.steps.runs, 4u);
  EXPECT_EQ(v.steps.baseline_n, 3u);
  EXPECT_NEAR(*v.steps.ratio, 115.0 / 210.0, 1e-12);
  EXPECT_NEAR(*v.time.ratio, (115.0 * 0.5) / (210.0 * 0.25), 1e-12);
  EXPECT_TRUE(v.time.p.has_value());
}

TEST(TargetVerdict, WhereOnlyOneSideMissedGehansTestDecidesNotWelchs) {
  // A seed of the row missed, every baseline seed reached: the censored seed's value (the horizon) is not a time to
  // target, so Welch's test on it would be wrong; Gehan's is the test (the guard and the verdict table say which).
  std::vector<bench::Censored> row{{100, true}, {110, true}, {120, true}, {300, false}}, base = reached({90, 95, 100});
  const auto v = ratio_verdict(row, base);
  EXPECT_EQ(v.test, "gehan");
  EXPECT_DOUBLE_EQ(*v.p, bench::gehan_test(row, base).p);
  const auto other_way = ratio_verdict(base, row);
  EXPECT_EQ(other_way.test, "gehan") << "the baseline's miss counts as much as the row's";
  EXPECT_EQ(ratio_verdict(reached({100, 110}), reached({90, 95})).test, "welch");
}

TEST(TargetVerdict, AnExactTestThatCannotReachTheLevelIsNotJudgedAndSaysTheSeedsItNeeds) {
  // 3 vs 3 with a miss: Gehan's smallest p over every split is 2/20 = 0.1, above 0.05, however far apart the rows.
  std::vector<bench::Censored> row{{50, true}, {60, true}, {300, false}}, base = reached({150, 155, 160});
  const auto v = ratio_verdict(row, base);
  EXPECT_NEAR(*v.min_p, 0.1, 1e-12);
  EXPECT_FALSE(v.judgeable());
  EXPECT_EQ(v.seeds_needed, 4u);
  std::vector<bench::Censored> four{{150, true}, {155, true}, {160, true}, {300, false}};
  const auto judged = ratio_verdict(reached({50, 60, 55, 65}), four);
  EXPECT_TRUE(judged.judgeable());
  EXPECT_LT(*judged.p, 0.05);
}

TEST(TargetVerdict, TwoOfFiveReachingIsNotJudgedFasterThanFiveOfFive) {
  // The two that reached are twice as fast as any baseline seed; judged on them alone (the old verdict) the row was
  // "x0.37, p 1e-4". Over all five it has no typical steps within the horizon, and Gehan's p is far from 0.05.
  const auto v = judge_against_baseline(runs({50, 60, std::nullopt, std::nullopt, std::nullopt}, 1, 200),
                                        runs({150, 155, 160, 145, 165}, 1, 200));
  EXPECT_FALSE(v.steps.ratio) << "Kaplan-Meier's median is beyond the horizon";
  EXPECT_EQ(v.steps.n, 2u);
  EXPECT_EQ(v.steps.runs, 5u);
  EXPECT_GT(*v.steps.p, 0.05);
  EXPECT_FALSE(v.steps.high) << "unbounded above";
}

TEST(TargetVerdict, OneSeedASideHasARatioButNoIntervalOrTest) {
  const auto v = judge_against_baseline(runs({100}, 1), runs({200, 210}, 1));
  EXPECT_NEAR(*v.steps.ratio, 100.0 / 205.0, 1e-12);
  EXPECT_FALSE(v.steps.low || v.steps.p);
  const auto none = judge_against_baseline(runs({std::nullopt, std::nullopt}, 1), runs({200, 210}, 1));
  EXPECT_FALSE(none.steps.ratio);
  EXPECT_EQ(none.steps.n, 0u);
}

TEST(TargetVerdict, IdenticalStepsAreNoDifference) {
  const auto v = ratio_verdict(reached({140, 140, 140}), reached({140, 140, 140}));
  EXPECT_DOUBLE_EQ(*v.ratio, 1.0);
  EXPECT_DOUBLE_EQ(*v.low, 1.0);
  EXPECT_DOUBLE_EQ(*v.high, 1.0);
  EXPECT_DOUBLE_EQ(*v.p, 1.0);
}

}  // namespace
}  // namespace stepwise::ablations
