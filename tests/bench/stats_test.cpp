// Statistics on synthetic samples: quantiles against numpy's, CV, the median's noise and the stopping rule.
#include "bench/stats.h"
#include "bench/source_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

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

TEST(Stats, OneSampleHasUnknownNoiseNotZero) {
  // With one step there is no interval at all: calling that "0% noise" would let a run stop on noise after one step.
  EXPECT_TRUE(std::isnan(summarize(std::vector<double>{7.0}).noise));
  EXPECT_FALSE(std::isnan(summarize(std::vector<double>{7.0, 8.0}).noise));
}

// The median's distribution-free 95% interval runs between the order statistics of 1-based ranks
// floor(n/2 - 1.96 sqrt(n)/2) and ceil(n/2 + 1 + 1.96 sqrt(n)/2); noise is its half-width over the median. On
// 101..120 (n = 20) the ranks are 5 and 16: (116 - 105) / (2 x 110.5); on 1..100 they are 40 and 61: 21 / 101.
TEST(Stats, MedianNoiseIsTheHalfWidthOfTheOrderStatisticInterval) {
  std::vector<double> twenty, hundred;
  for (int i = 1; i <= 20; ++i) twenty.push_back(100 + i);
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  EXPECT_DOUBLE_EQ(summarize(twenty).noise, 11.0 / 221.0);
  EXPECT_DOUBLE_EQ(summarize(hundred).noise, 21.0 / 101.0);
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

TEST(StopRule, NoiseOnlyAfterMinStepsAndTheTimeCapIsHard) {
  StopRule rule;
  rule.min_steps = 10;
  rule.max_steps = 100;
  rule.max_noise = 0.01;
  rule.max_time_s = 5;
  EXPECT_FALSE(should_stop(rule, 5, 0.0, 1.0));  // below min_steps no noise level stops the run
  // The time cap holds below min_steps too (a run then ends short), once a step was measured.
  EXPECT_EQ(should_stop(rule, 3, 0.5, 5.0), StopReason::MaxTime);
  EXPECT_FALSE(should_stop(rule, 0, 0.5, 100.0));
  EXPECT_EQ(should_stop(rule, 10, 0.005, 0.1), StopReason::Noise);
  EXPECT_FALSE(should_stop(rule, 10, 0.05, 0.1));
  EXPECT_EQ(should_stop(rule, 10, 0.05, 6.0), StopReason::MaxTime);
  EXPECT_EQ(should_stop(rule, 100, 0.05, 0.1), StopReason::MaxSteps);
  EXPECT_EQ(to_string(StopReason::Noise), "noise");
}

// The shared cases, tests/fixtures/stop_rule_cases.json, whose expected values are this code's: bench/python/stats.py
// is held to the same file (tests/python/test_stop_rule_cases.py), so the C++ and the Python rows stop by one rule.
// Within 1e-12 relative; null stands for NaN (JSON has none), and an expected 0 must be exactly 0.
::testing::AssertionResult same_as_shared(double actual, const nlohmann::json& expected) {
  if (expected.is_null()) {
    if (std::isnan(actual)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << actual << " where the fixture has NaN (null)";
  }
  const double e = expected.get<double>();
  if (std::abs(actual - e) <= 1e-12 * std::abs(e)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << actual << " where the fixture has " << e;
}

TEST(Stats, SharedStopRuleCasesHoldTheCxxAndThePythonRuleEqual) {
  const auto path = source_dir() / "tests" / "fixtures" / "stop_rule_cases.json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path << " is missing";
  const auto cases = nlohmann::json::parse(in);
  const auto rule_of = [](const nlohmann::json& c) {
    StopRule rule;
    rule.min_steps = c["rule"]["min_steps"].get<size_t>();
    rule.max_steps = c["rule"]["max_steps"].get<size_t>();
    rule.max_noise = c["rule"]["max_noise"].get<double>();
    rule.max_time_s = c["rule"]["max_time_s"].get<double>();
    return rule;
  };
  const auto reason = [](std::optional<StopReason> r) { return r ? to_string(*r) : std::string("none"); };
  const auto expected_reason = [](const nlohmann::json& e) {
    return e.is_null() ? std::string("none") : e.get<std::string>();
  };

  ASSERT_FALSE(cases["summaries"].empty());
  for (const auto& c : cases["summaries"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto samples = c["samples"].get<std::vector<double>>();
    const Summary s = summarize(samples);
    const auto& e = c["summary"];
    EXPECT_EQ(s.n, e["n"].get<size_t>());
    EXPECT_TRUE(same_as_shared(s.median, e["median"])) << "median";
    EXPECT_TRUE(same_as_shared(s.mean, e["mean"])) << "mean";
    EXPECT_TRUE(same_as_shared(s.min, e["min"])) << "min";
    EXPECT_TRUE(same_as_shared(s.max, e["max"])) << "max";
    EXPECT_TRUE(same_as_shared(s.p10, e["p10"])) << "p10";
    EXPECT_TRUE(same_as_shared(s.p90, e["p90"])) << "p90";
    EXPECT_TRUE(same_as_shared(s.stddev, e["stddev"])) << "stddev";
    EXPECT_TRUE(same_as_shared(s.cv, e["cv"])) << "cv";
    EXPECT_TRUE(same_as_shared(s.noise, e["noise"])) << "noise";
    auto sorted = samples;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_TRUE(same_as_shared(median_noise(sorted), c["median_noise"])) << "median_noise";
    for (const auto& q : c["quantiles"])
      EXPECT_TRUE(same_as_shared(quantile(sorted, q[0].get<double>()), q[1])) << "quantile " << q[0].get<double>();
  }

  ASSERT_FALSE(cases["stop_rule"].empty());
  for (const auto& c : cases["stop_rule"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const double noise = c["noise"].is_null() ? std::numeric_limits<double>::quiet_NaN() : c["noise"].get<double>();
    EXPECT_EQ(reason(should_stop(rule_of(c), c["n"].get<size_t>(), noise, c["elapsed_s"].get<double>())),
              expected_reason(c["expected"]));
  }

  // The runner's decision after a chunk: should_stop with the summary's noise (NaN for one step).
  ASSERT_FALSE(cases["stop_after_samples"].empty());
  for (const auto& c : cases["stop_after_samples"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const Summary s = summarize(c["samples"].get<std::vector<double>>());
    EXPECT_TRUE(same_as_shared(s.noise, c["noise"])) << "noise";
    EXPECT_EQ(reason(should_stop(rule_of(c), s.n, s.noise, c["elapsed_s"].get<double>())),
              expected_reason(c["expected"]));
  }
}

}  // namespace
}  // namespace stepwise::bench
