// Seeds censored at the horizon: Kaplan-Meier's median against hand-worked cases (and the plain median when every
// seed reached), Gehan's exact p against its hand count, and a row where only 2 of 5 seeds reached that is not judged
// faster than a baseline whose 5 all reached, however fast its 2 were.
#include "bench/measure/censored.h"

#include <gtest/gtest.h>

namespace stepwise::bench {
namespace {

std::vector<Censored> reached(std::vector<double> v) {
  std::vector<Censored> out;
  for (double x : v) out.push_back({x, true});
  return out;
}

TEST(KaplanMeier, EveryoneReachedIsThePlainMedian) {
  EXPECT_EQ(*kaplan_meier_median(reached({150, 140, 160, 155, 145})), 150);
  EXPECT_EQ(*kaplan_meier_median(reached({100, 120, 140, 160})), 130) << "at exactly 0.5, the midpoint (survfit)";
}

TEST(KaplanMeier, CensoredSeedsCountAsBeyondTheHorizon) {
  // 3 of 5 reached: S falls 0.8, 0.6, 0.4 at the third crossing.
  EXPECT_EQ(*kaplan_meier_median(std::vector<Censored>{{50, true}, {60, true}, {70, true}, {200, false}, {200, false}}),
            70);
  // 2 of 5: S never falls below 0.6, so the typical seed is beyond the horizon, whatever the 2 did.
  EXPECT_FALSE(
      kaplan_meier_median(std::vector<Censored>{{50, true}, {60, true}, {200, false}, {200, false}, {200, false}}));
  // A seed censored early leaves the risk set: 4 left at 100, S 0.75 there, 0.5 at 110: the midpoint to 120.
  const std::vector<Censored> early{{40, false}, {100, true}, {110, true}, {120, true}, {200, false}};
  EXPECT_EQ(*kaplan_meier_median(early), 115);
}

TEST(Gehan, CompletelySeparatedFiveAgainstFiveIsTwoOf252) {
  const auto g = gehan_test(reached({60, 61, 62, 63, 64}), reached({150, 151, 152, 153, 154}));
  EXPECT_TRUE(g.exact);
  EXPECT_DOUBLE_EQ(g.w, -25) << "each of the 25 pairs sooner";
  EXPECT_NEAR(g.p, 2.0 / 252, 1e-12) << "only the observed split and its mirror are as extreme";
  const auto same = gehan_test(reached({150, 151, 152, 153, 154}), reached({150, 151, 152, 153, 154}));
  EXPECT_NEAR(same.p, 1.0, 1e-12);
}

TEST(Gehan, TwoOfFiveReachingIsNotFasterThanABaselineWhoseFiveReach) {
  // The 2 that reached are far sooner than every baseline seed, but 3 never crossed by the horizon 200, where every
  // baseline seed had: over all the seeds this row is not faster (w > 0: it leans slower).
  const std::vector<Censored> row{{50, true}, {60, true}, {200, false}, {200, false}, {200, false}};
  const auto baseline = reached({150, 155, 160, 145, 165});
  const auto g = gehan_test(row, baseline);
  EXPECT_GT(g.w, 0);
  EXPECT_GT(g.p, 0.05);
  EXPECT_FALSE(kaplan_meier_median(row)) << "no typical steps to compare: beyond the horizon";
  const auto interval = km_median_ratio_interval(row, baseline, 2000, 0.95, 0);
  ASSERT_TRUE(interval);
  EXPECT_FALSE(interval->high) << "the ratio's upper bound is unbounded, never a number below 1";
}

}  // namespace
}  // namespace stepwise::bench
