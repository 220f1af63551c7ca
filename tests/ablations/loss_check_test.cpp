// The loss check flags a configuration whose loss curve leaves the baseline's, and only then.
#include "ablations/loss_check.h"

#include <gtest/gtest.h>

#include <vector>

namespace stepwise::ablations {
namespace {

std::vector<double> curve(size_t n, double start, double slope) {
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(start - slope * static_cast<double>(i));
  return v;
}

TEST(LossCheck, SameCurveIsOkAndTheWindowIsTheLastCommonSteps) {
  const auto base = curve(30, 10, 0.05), same = curve(20, 10, 0.05);
  const auto c = check_loss(same, std::span<const double>(base), 5, false, true);
  EXPECT_EQ(c.status, "ok");
  EXPECT_EQ(c.window_begin, 15u);
  EXPECT_EQ(c.window_end, 20u);
  EXPECT_NEAR(*c.rel_diff, 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(*c.tolerance, kLossToleranceFp32);
}

TEST(LossCheck, AFasterFallingCurveIsMathChanged) {
  // A model that sees the future (a broken causal mask) learns much faster than the baseline.
  const auto base = curve(20, 10, 0.05), cheating = curve(20, 10, 0.3);
  EXPECT_EQ(check_loss(cheating, std::span<const double>(base), 5, false, true).status, "math changed");
}

TEST(LossCheck, Bf16GetsTheWiderTolerance) {
  const auto base = curve(20, 10, 0.05);
  auto shifted = base;
  for (auto& x : shifted) x *= 1.03;  // 3%: beyond fp32's 2%, within bf16's 5%
  EXPECT_EQ(check_loss(shifted, std::span<const double>(base), 5, false, true).status, "math changed");
  EXPECT_EQ(check_loss(shifted, std::span<const double>(base), 5, true, true).status, "ok");
}

TEST(LossCheck, NoBaselineDifferentBatchOrNanAreNotJudged) {
  const auto base = curve(20, 10, 0.05);
  EXPECT_EQ(check_loss(base, std::nullopt, 5, false, true).status, "no baseline");
  EXPECT_EQ(check_loss(base, std::span<const double>(base), 5, false, false).status, "not comparable");
  auto nan = base;
  nan.back() = std::nan("");
  EXPECT_EQ(check_loss(nan, std::span<const double>(base), 5, false, true).status, "not comparable");
}

TEST(LossCheck, TheBaselineChecksAgainstItself) {
  const auto c = baseline_loss(curve(12, 10, 0.1), 5);
  EXPECT_EQ(c.status, "baseline");
  EXPECT_EQ(c.window_begin, 7u);
  EXPECT_NEAR(*c.window_mean, 10 - 0.1 * 9, 1e-12);
}

}  // namespace
}  // namespace stepwise::ablations
