// Time and steps to target against the baseline: the ratio of medians, its seeded bootstrap interval (the same on
// every call), Welch's p against scipy, only the seeds that reached the target, and nothing from one seed a side.
#include "ablations/target_verdict.h"

#include <gtest/gtest.h>

namespace stepwise::ablations {
namespace {

std::vector<bench::SeedRun> runs(std::vector<std::optional<int64_t>> steps, double seconds_per_step) {
  std::vector<bench::SeedRun> out;
  for (const auto& s : steps) {
    bench::SeedRun r;
    r.reached = s.has_value();
    r.steps = s;
    if (s) r.time_s = static_cast<double>(*s) * seconds_per_step;
    out.push_back(r);
  }
  return out;
}

TEST(TargetVerdict, SlowerIsShownAsItIsWithItsIntervalAndWelchsP) {
  // Steps 10..14 (median 12) against 20..25 (median 22.5): x0.533. scipy.stats.ttest_ind(a, b, equal_var=False).
  const auto v = ratio_verdict({10, 11, 12, 13, 14}, {20, 21, 22, 23, 24, 25});
  EXPECT_NEAR(*v.ratio, 12.0 / 22.5, 1e-12);
  EXPECT_NEAR(*v.p, 3.3562185586157048e-06, 1e-12);
  ASSERT_TRUE(v.low && v.high);
  EXPECT_LE(*v.low, *v.ratio);
  EXPECT_GE(*v.high, *v.ratio);
  EXPECT_GE(*v.low, 10.0 / 25.0) << "no resample can go below min/max";
  EXPECT_LE(*v.high, 14.0 / 20.0);
  EXPECT_EQ(v.n, 5u);
  EXPECT_EQ(v.baseline_n, 6u);
  // The other way round: slower, above 1, with the reciprocal median ratio.
  const auto slower = ratio_verdict({20, 21, 22, 23, 24, 25}, {10, 11, 12, 13, 14});
  EXPECT_NEAR(*slower.ratio, 22.5 / 12.0, 1e-12);
  EXPECT_GT(*slower.low, 1.0);
  // Seeded: the same interval on every call.
  const auto again = ratio_verdict({10, 11, 12, 13, 14}, {20, 21, 22, 23, 24, 25});
  EXPECT_EQ(*again.low, *v.low);
  EXPECT_EQ(*again.high, *v.high);
}

TEST(TargetVerdict, OnlySeedsThatReachedTheTargetCountInTimeAndSteps) {
  const auto v = judge_against_baseline(runs({100, std::nullopt, 120, 110}, 0.5), runs({200, 220, 210}, 0.25));
  EXPECT_EQ(v.steps.n, 3u);
  EXPECT_EQ(v.steps.baseline_n, 3u);
  EXPECT_NEAR(*v.steps.ratio, 110.0 / 210.0, 1e-12);
  EXPECT_NEAR(*v.time.ratio, (110.0 * 0.5) / (210.0 * 0.25), 1e-12);
  EXPECT_TRUE(v.time.p.has_value());
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
  const auto v = ratio_verdict({140, 140, 140}, {140, 140, 140});
  EXPECT_DOUBLE_EQ(*v.ratio, 1.0);
  EXPECT_DOUBLE_EQ(*v.low, 1.0);
  EXPECT_DOUBLE_EQ(*v.high, 1.0);
  EXPECT_DOUBLE_EQ(*v.p, 1.0);
}

}  // namespace
}  // namespace stepwise::ablations
