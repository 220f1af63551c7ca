// Across-seed statistics: order-statistic intervals, the olympic mean, and Student's t through the regularized
// incomplete beta function (its continued fraction, evaluated by the modified Lentz method), which is all Welch's
// test needs and keeps the engine free of a statistics library.
#include "bench/measure/seed_statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace stepwise::bench {

namespace {

// The continued fraction converges in a few dozen terms for the arguments Student's t gives; this bounds it.
constexpr int kMaxFractionTerms = 300;
// Relative accuracy at which the continued fraction stops.
constexpr double kFractionEpsilon = 1e-15;
// Guards the Lentz iteration against a zero denominator.
constexpr double kTiny = 1e-300;

// The continued fraction of the regularized incomplete beta function I_x(a, b), valid for x < (a + 1) / (a + b + 2).
double beta_fraction(double a, double b, double x) {
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= kMaxFractionTerms; ++m) {
    const double m2 = 2.0 * m;
    // Even step.
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    // Odd step.
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1) < kFractionEpsilon) break;
  }
  return h;
}

// I_x(a, b), the regularized incomplete beta function.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;  // the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) converges faster
}

double variance(std::span<const double> v, double mean) {
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return ss / static_cast<double>(v.size() - 1);
}

double mean_of(std::span<const double> v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

double student_t_two_sided_p(double t, double df) {
  if (!std::isfinite(t)) return 0;
  return incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

double student_t_lower_p(double t, double df) {
  if (std::isnan(t)) return 1;
  // The two tails are equal: half the two-sided p is the tail beyond |t|; below zero that is the lower tail itself.
  const double tail = student_t_two_sided_p(t, df) / 2;
  return t < 0 ? tail : 1 - tail;
}

double student_t_quantile_95(double df) {
  // Bisection on the p-value, which falls monotonically in |t|.
  double lo = 0, hi = 1e3;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (student_t_two_sided_p(mid, df) > 0.05 ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

SeedSummary summarize_seeds(std::span<const double> values) {
  if (values.empty()) throw std::invalid_argument("summary of no seeds");
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  SeedSummary s;
  s.n = n;
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  s.mean = mean_of(v);
  // Ranks floor(n/2 - 1.96 sqrt(n)/2) and ceil(n/2 + 1 + 1.96 sqrt(n)/2), as bench/stats.cpp, used only where
  // the whole sample can reach 95% coverage at all (n >= 6: 1 - 2 x 0.5^6 = 0.969).
  if (n >= 6) {
    const double half = 1.959963984540054 * std::sqrt(static_cast<double>(n)) / 2;
    const auto lo = std::clamp<long>(static_cast<long>(std::floor(n / 2.0 - half)), 1, static_cast<long>(n));
    const auto hi = std::clamp<long>(static_cast<long>(std::ceil(n / 2.0 + 1 + half)), 1, static_cast<long>(n));
    s.median_low = v[static_cast<size_t>(lo - 1)];
    s.median_high = v[static_cast<size_t>(hi - 1)];
  }
  s.olympic_mean = n >= 3 ? std::accumulate(v.begin() + 1, v.end() - 1, 0.0) / static_cast<double>(n - 2) : s.mean;
  if (n >= 2) {
    const double half =
        student_t_quantile_95(static_cast<double>(n - 1)) * std::sqrt(variance(v, s.mean) / static_cast<double>(n));
    s.mean_low = s.mean - half;
    s.mean_high = s.mean + half;
  }
  return s;
}

WelchTest welch_t_test(std::span<const double> a, std::span<const double> b) {
  if (a.size() < 2 || b.size() < 2) throw std::invalid_argument("Welch's t-test needs two values on each side");
  const double ma = mean_of(a), mb = mean_of(b);
  const double va = variance(a, ma) / static_cast<double>(a.size());
  const double vb = variance(b, mb) / static_cast<double>(b.size());
  WelchTest w;
  if (va + vb == 0) {
    w.t = ma == mb ? 0 : std::copysign(std::numeric_limits<double>::infinity(), ma - mb);
    w.df = static_cast<double>(a.size() + b.size() - 2);
    w.p = ma == mb ? 1 : 0;
    return w;
  }
  w.t = (ma - mb) / std::sqrt(va + vb);
  // Welch–Satterthwaite degrees of freedom.
  w.df = (va + vb) * (va + vb) /
         (va * va / static_cast<double>(a.size() - 1) + vb * vb / static_cast<double>(b.size() - 1));
  w.p = student_t_two_sided_p(w.t, w.df);
  return w;
}

OneSampleTest one_sample_t_test_below(std::span<const double> values, double bound) {
  if (values.size() < 2) throw std::invalid_argument("a one-sample t-test needs two values");
  OneSampleTest o;
  const auto n = static_cast<double>(values.size());
  o.mean = mean_of(values);
  o.sd = std::sqrt(variance(values, o.mean));
  o.df = n - 1;
  if (o.sd == 0) {
    o.t = o.mean < bound ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    o.p = o.mean < bound ? 0 : 1;
    return o;
  }
  o.t = (o.mean - bound) / (o.sd / std::sqrt(n));
  o.p = student_t_lower_p(o.t, o.df);
  return o;
}

}  // namespace stepwise::bench
