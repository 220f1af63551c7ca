// Statistics across seeds, for time to a target loss: each seed is one run of a configuration (its own initial
// weights, data order and dropout), and a configuration is judged on all of them — the median with its
// distribution-free interval, MLPerf's olympic mean, and Welch's t-test between two configurations.
#pragma once

#include <optional>
#include <span>
#include <string>

namespace stepwise::bench {

// One quantity (steps, tokens or seconds to the target) over the seeds that reached the target.
struct SeedSummary {
  size_t n = 0;
  double median = 0, mean = 0;
  // The median's distribution-free 95% interval, from order statistics; none below 6 seeds, where even the whole
  // range covers the median with less than 95% probability (2 x 0.5^n).
  std::optional<double> median_low, median_high;
  // MLPerf's score: the mean without the fastest and the slowest (the plain mean below 3 seeds).
  double olympic_mean = 0;
  // The mean's 95% t-interval (normal errors assumed); none for a single seed.
  std::optional<double> mean_low, mean_high;
};

// Throws std::invalid_argument on an empty sample.
SeedSummary summarize_seeds(std::span<const double> values);

// Welch's unequal-variance t-test of mean(a) - mean(b), two-sided.
struct WelchTest {
  double t = 0, df = 0, p = 1;
};
// Needs two values on each side; identical constant samples give t = 0, p = 1.
WelchTest welch_t_test(std::span<const double> a, std::span<const double> b);

// The one-sample one-sided t-test that the mean of `values` lies below `bound`: H0 mean >= bound, t = (mean - bound)
// / (sd / sqrt(n)), p = P(T_{n-1} <= t), so a mean well below the bound gives a small p (the speedrun's record rule).
struct OneSampleTest {
  double mean = 0, sd = 0, t = 0, df = 0, p = 1;
};
// Needs two values; a constant sample gives t = -inf, p = 0 below the bound, +inf and 1 at or above it.
OneSampleTest one_sample_t_test_below(std::span<const double> values, double bound);

// P(T <= t) for Student's t with `df` degrees of freedom: the lower tail, for a one-sided test.
double student_t_lower_p(double t, double df);
// P(|T| >= |t|) for Student's t with `df` degrees of freedom, from the regularized incomplete beta function.
double student_t_two_sided_p(double t, double df);
// The two-sided 95% quantile of Student's t with `df` degrees of freedom (t such that the p above is 0.05).
double student_t_quantile_95(double df);

}  // namespace stepwise::bench
