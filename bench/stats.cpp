// The statistics behind every number: quantiles, the distribution-free confidence interval of the median that the
// stopping rule drives down, and the summary each result carries.
#include "bench/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace stepwise::bench {

namespace {
// Two-sided 95% normal quantile, used for the binomial order-statistic interval of the median.
constexpr double kZ95 = 1.959963984540054;
}  // namespace

double quantile(std::span<const double> sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("quantile of an empty sample");
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double median_noise(std::span<const double> sorted) {
  const double n = static_cast<double>(sorted.size());
  const double half = kZ95 * std::sqrt(n) / 2.0;
  // 1-based ranks of the interval's ends, clamped to the sample.
  const auto lo_rank = static_cast<long>(std::floor(n / 2.0 - half));
  const auto hi_rank = static_cast<long>(std::ceil(n / 2.0 + 1.0 + half));
  const auto lo = static_cast<size_t>(std::clamp(lo_rank, 1L, static_cast<long>(n)) - 1);
  const auto hi = static_cast<size_t>(std::clamp(hi_rank, 1L, static_cast<long>(n)) - 1);
  const double median = quantile(sorted, 0.5);
  if (median == 0) return 0;
  return (sorted[hi] - sorted[lo]) / (2.0 * std::abs(median));
}

Summary summarize(std::span<const double> samples) {
  if (samples.empty()) throw std::invalid_argument("summary of an empty sample");
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  Summary s;
  s.n = sorted.size();
  s.median = quantile(sorted, 0.5);
  s.p10 = quantile(sorted, 0.1);
  s.p90 = quantile(sorted, 0.9);
  s.min = sorted.front();
  s.max = sorted.back();
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(s.n);
  double ss = 0;
  for (double x : sorted) ss += (x - s.mean) * (x - s.mean);
  // Sample standard deviation (n - 1), as google/benchmark's aggregates.
  s.stddev = s.n > 1 ? std::sqrt(ss / static_cast<double>(s.n - 1)) : 0.0;
  s.cv = s.mean != 0 ? s.stddev / s.mean : 0.0;
  // One sample has no spread to speak of: its noise is unknown (NaN, null in JSON), never a perfect 0.
  s.noise = s.n < 2 ? std::numeric_limits<double>::quiet_NaN() : median_noise(sorted);
  return s;
}

std::string to_string(StopReason r) { return kStopReasonNames.to_string(r); }

std::optional<StopReason> should_stop(const StopRule& rule, size_t n, double noise, double elapsed_s) {
  if (n >= rule.max_steps) return StopReason::MaxSteps;
  if (n >= rule.min_steps && noise <= rule.max_noise) return StopReason::Noise;
  // A hard cap, as nvbench's timeout: a configuration too slow for --min-steps keeps what it measured and is marked
  // short (summary.short), instead of running on past its budget.
  if (n >= 1 && elapsed_s >= rule.max_time_s) return StopReason::MaxTime;
  return std::nullopt;
}

}  // namespace stepwise::bench
