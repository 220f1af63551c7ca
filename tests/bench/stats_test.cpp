// Statistics on synthetic samples: quantiles against numpy's, CV, the median's noise and the stopping rule.
#include "bench/stats.h"

#include <gtest/gtest.h>

#include <random>

namespace stepwise::bench {
namespace {

TEST(Stats, QuantilesInterpolateLikeNumpy) {
  const std::vector<double> x{1, 2, 3, 4, 10};  // numpy.percentile(x, [10, 50, 90]) = 1.4, 3.0, 7.6
  EXPECT_DOUBLE_EQ(quantile(x, 0.1), 1.4);
  EXPECT_DOUBLE_EQ(quantile(x, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(quantile(x, 0.9), 7.6);
  EXPECT_THROW(quantile(std::vector<double>{}, 0.5), std::invalid_argument);
}

TEST(Stats, SummaryOfAKnownSample) {
  const std::vector<double> x{12, 10, 11, 13, 9};  // unsorted on purpose
  const Summary s = summarize(x);
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.median, 11);
  EXPECT_DOUBLE_EQ(s.mean, 11);
  EXPECT_DOUBLE_EQ(s.min, 9);
  EXPECT_DOUBLE_EQ(s.max, 13);
  EXPECT_NEAR(s.stddev, 1.5811388300841898, 1e-12);  // sample stddev, numpy.std(x, ddof=1)
  EXPECT_NEAR(s.cv, 1.5811388300841898 / 11, 1e-12);
  EXPECT_THROW(summarize(std::vector<double>{}), std::invalid_argument);
}

TEST(Stats, ConstantSamplesHaveNoNoise) {
  const Summary s = summarize(std::vector<double>(20, 5.0));
  EXPECT_DOUBLE_EQ(s.stddev, 0);
  EXPECT_DOUBLE_EQ(s.noise, 0);
}

TEST(Stats, MedianNoiseShrinksWithMoreSamples) {
  std::mt19937 rng(1);
  std::normal_distribution<double> step_ms(100, 5);
  std::vector<double> x;
  for (int i = 0; i < 1000; ++i) x.push_back(step_ms(rng));
  const double noise_20 = summarize(std::span(x).first(20)).noise;
  const double noise_1000 = summarize(x).noise;
  EXPECT_GT(noise_20, noise_1000);
  // For a normal sample the median's CI half-width is about 1.96 * 1.2533 * sigma / sqrt(n).
  EXPECT_NEAR(noise_1000, 1.96 * 1.2533 * 5 / std::sqrt(1000.0) / 100, 0.003);
}

TEST(Stats, AnOutlierMovesTheMeanNotTheMedian) {
  std::vector<double> x(19, 10.0);
  x.push_back(1000);
  const Summary s = summarize(x);
  EXPECT_DOUBLE_EQ(s.median, 10);
  EXPECT_GT(s.mean, 50);
}

TEST(StopRule, MinStepsAlwaysRunThenNoiseOrCapsStop) {
  StopRule rule;
  rule.min_steps = 10;
  rule.max_steps = 100;
  rule.max_noise = 0.01;
  rule.max_time_s = 5;
  EXPECT_FALSE(should_stop(rule, 5, 0.0, 100.0));  // below min_steps even with no noise and past the time cap
  EXPECT_EQ(should_stop(rule, 10, 0.005, 0.1), StopReason::Noise);
  EXPECT_FALSE(should_stop(rule, 10, 0.05, 0.1));
  EXPECT_EQ(should_stop(rule, 10, 0.05, 6.0), StopReason::MaxTime);
  EXPECT_EQ(should_stop(rule, 100, 0.05, 0.1), StopReason::MaxSteps);
  EXPECT_EQ(to_string(StopReason::Noise), "noise");
}

}  // namespace
}  // namespace stepwise::bench
