// Statistics across seeds: Student's t and Welch's test against scipy.stats (1.14.1) at a few points, the olympic
// mean, and the order-statistic interval that exists only from six seeds on.
#include "bench/measure/seed_statistics.h"

#include <gtest/gtest.h>

#include <vector>

namespace stepwise::bench {
namespace {

TEST(StudentT, TwoSidedPMatchesScipy) {
  // 2 * scipy.stats.t.sf(|t|, df)
  EXPECT_NEAR(student_t_two_sided_p(2.0, 4), 0.1161165235168155, 1e-12);
  EXPECT_NEAR(student_t_two_sided_p(0.5, 2.5), 0.6576979198697148, 1e-12);
  EXPECT_NEAR(student_t_two_sided_p(-3.7, 10.3), 0.003908389321112249, 1e-12);
  EXPECT_NEAR(student_t_two_sided_p(10, 3), 0.0021283990584141494, 1e-12);
}

TEST(StudentT, QuantileMatchesScipy) {
  // scipy.stats.t.ppf(0.975, df)
  EXPECT_NEAR(student_t_quantile_95(2), 4.302652729696142, 1e-9);
  EXPECT_NEAR(student_t_quantile_95(5.5), 2.501858617589239, 1e-9);
  EXPECT_NEAR(student_t_quantile_95(30), 2.0422724563012373, 1e-9);
}

TEST(WelchTest, MatchesScipysUnequalVarianceTest) {
  // scipy.stats.ttest_ind(a, b, equal_var=False)
  const std::vector<double> a{120, 131, 125, 128}, b{100, 104, 99, 101, 103};
  const auto w = welch_t_test(a, b);
  EXPECT_NEAR(w.t, 9.75453450433317, 1e-10);
  EXPECT_NEAR(w.df, 3.9392949777144395, 1e-10);
  EXPECT_NEAR(w.p, 0.0006668846374223486, 1e-12);
  EXPECT_NEAR(welch_t_test(b, a).t, -w.t, 1e-12);
}

TEST(WelchTest, IdenticalConstantSamplesAreNoDifference) {
  const std::vector<double> a{140, 140, 140};
  EXPECT_EQ(welch_t_test(a, a).p, 1);
  const std::vector<double> b{160, 160, 160};
  EXPECT_EQ(welch_t_test(a, b).p, 0);
}

TEST(SeedSummary, OlympicMeanDropsTheFastestAndTheSlowest) {
  const std::vector<double> v{100, 300, 110, 120};
  const auto s = summarize_seeds(v);
  EXPECT_DOUBLE_EQ(s.olympic_mean, 115);
  EXPECT_DOUBLE_EQ(s.median, 115);
  EXPECT_DOUBLE_EQ(s.mean, 157.5);
  ASSERT_TRUE(s.mean_low && s.mean_high);
  EXPECT_LT(*s.mean_low, s.mean);
}

TEST(SeedSummary, TheMediansIntervalNeedsSixSeeds) {
  const std::vector<double> five{1, 2, 3, 4, 5}, six{1, 2, 3, 4, 5, 6};
  EXPECT_FALSE(summarize_seeds(five).median_low);
  const auto s = summarize_seeds(six);
  ASSERT_TRUE(s.median_low && s.median_high);
  // Ranks floor(3 - 2.4) = 1 and ceil(4 + 2.4) = 7 -> clamped to 6: the whole range, 96.9% coverage.
  EXPECT_EQ(*s.median_low, 1);
  EXPECT_EQ(*s.median_high, 6);
}

}  // namespace
}  // namespace stepwise::bench
