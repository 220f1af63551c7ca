// Kaplan-Meier's median, Gehan's test (exact by permutation, else Mantel's variance) and a bootstrap of the medians'
// ratio, for seeds censored at the horizon.
#include "bench/measure/censored.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace stepwise::bench {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// +1 where x is surely later than y, -1 surely sooner, 0 unknown or tied.
int gehan_score(const Censored& x, const Censored& y) {
  if (x.reached && y.reached) return x.value > y.value ? 1 : x.value < y.value ? -1 : 0;
  if (!x.reached && y.reached) return x.value >= y.value ? 1 : 0;  // still above the target where y had crossed
  if (x.reached && !y.reached) return x.value <= y.value ? -1 : 0;
  return 0;  // both censored
}

uint64_t binomial(size_t n, size_t k) {
  double r = 1;
  for (size_t i = 1; i <= k; ++i) r = r * static_cast<double>(n - k + i) / static_cast<double>(i);
  return r > 1e18 ? UINT64_MAX : static_cast<uint64_t>(std::llround(r));
}

double median_or_inf(std::span<const Censored> v) { return kaplan_meier_median(v).value_or(kInf); }

}  // namespace

std::optional<double> kaplan_meier_median(std::span<const Censored> values) {
  std::vector<Censored> v(values.begin(), values.end());
  // At a tie a crossing comes before a censoring: a seed censored at t was still above the target at t.
  std::sort(v.begin(), v.end(), [](const Censored& a, const Censored& b) {
    return a.value < b.value || (a.value == b.value && a.reached && !b.reached);
  });
  double survival = 1;
  size_t at_risk = v.size();
  for (size_t i = 0; i < v.size();) {
    size_t j = i, crossed = 0;
    for (; j < v.size() && v[j].value == v[i].value && v[j].reached; ++j) ++crossed;
    if (crossed == 0) {  // a censoring: it leaves the risk set
      --at_risk;
      ++i;
      continue;
    }
    survival *= 1 - static_cast<double>(crossed) / static_cast<double>(at_risk);
    at_risk -= crossed;
    const double t = v[i].value;
    i = j;
    if (survival < 0.5 - 1e-12) return t;
    if (std::abs(survival - 0.5) <= 1e-12) {
      for (size_t k = i; k < v.size(); ++k)
        if (v[k].reached) return (t + v[k].value) / 2;
      return t;
    }
  }
  return std::nullopt;
}

GehanTest gehan_test(std::span<const Censored> a, std::span<const Censored> b) {
  std::vector<Censored> pooled(a.begin(), a.end());
  pooled.insert(pooled.end(), b.begin(), b.end());
  const size_t n = pooled.size(), na = a.size();
  // Each seed's score against every other: w is the sum over a's seeds (the pairs within a cancel).
  std::vector<double> u(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) u[i] += gehan_score(pooled[i], pooled[j]);
  GehanTest g;
  for (size_t i = 0; i < na; ++i) g.w += u[i];
  double sum_sq = 0;
  for (double x : u) sum_sq += x * x;
  const double variance = n > 1 ? static_cast<double>(na * (n - na)) / static_cast<double>(n * (n - 1)) * sum_sq : 0;
  g.z = variance > 0 ? g.w / std::sqrt(variance) : 0;
  if (na == 0 || na == n || variance == 0) {
    g.p = g.min_p = 1;  // no split scores differently
    return g;
  }
  if (binomial(n, na) <= kGehanExactSplits) {
    // Every way to pick a's seeds from the pool: the share whose |w| is at least the one observed.
    std::vector<bool> pick(n, false);
    std::fill(pick.begin(), pick.begin() + static_cast<std::ptrdiff_t>(na), true);
    uint64_t total = 0, extreme = 0, at_most_extreme = 0;
    double most = -1;  // the largest |w| of any split
    do {
      double w = 0;
      for (size_t i = 0; i < n; ++i)
        if (pick[i]) w += u[i];
      ++total;
      if (std::abs(w) >= std::abs(g.w) - 1e-9) ++extreme;
      if (std::abs(w) > most + 1e-9) {
        most = std::abs(w);
        at_most_extreme = 1;
      } else if (std::abs(w) >= most - 1e-9) {
        ++at_most_extreme;
      }
    } while (std::prev_permutation(pick.begin(), pick.end()));
    g.p = static_cast<double>(extreme) / static_cast<double>(total);
    g.min_p = static_cast<double>(at_most_extreme) / static_cast<double>(total);
    g.exact = true;
  } else {
    g.p = std::erfc(std::abs(g.z) / std::sqrt(2.0));
  }
  return g;
}

size_t seeds_for_exact_p_below(double alpha) {
  size_t n = 1;
  while (2.0 / static_cast<double>(binomial(2 * n, n)) >= alpha) ++n;
  return n;
}

std::optional<CensoredInterval> km_median_ratio_interval(std::span<const Censored> a, std::span<const Censored> b,
                                                         size_t resamples, double confidence, uint64_t seed) {
  if (a.size() < 2 || b.size() < 2) return std::nullopt;
  std::mt19937_64 rng(seed);
  std::vector<Censored> scratch;
  auto resampled = [&](std::span<const Censored> sample) {
    std::uniform_int_distribution<size_t> pick(0, sample.size() - 1);
    scratch.resize(sample.size());
    for (auto& x : scratch) x = sample[pick(rng)];
    return median_or_inf(scratch);
  };
  std::vector<double> ratios;
  ratios.reserve(resamples);
  for (size_t i = 0; i < resamples; ++i) {
    const double num = resampled(a), den = resampled(b);
    if (std::isinf(num) && std::isinf(den)) continue;  // both beyond the horizon: no ratio
    ratios.push_back(std::isinf(den) ? 0 : num / den);
  }
  if (ratios.empty()) return std::nullopt;
  std::sort(ratios.begin(), ratios.end());
  // Nearest-rank percentiles: an unbounded ratio (inf) stays one, never interpolated into a number.
  const double tail = (1 - confidence) / 2;
  const auto at = [&](double q) {
    const auto k = static_cast<size_t>(
        std::clamp(std::ceil(q * static_cast<double>(ratios.size())) - 1, 0.0, static_cast<double>(ratios.size() - 1)));
    return ratios[k];
  };
  CensoredInterval interval;
  if (const double low = at(tail); std::isfinite(low)) interval.low = low;
  if (const double high = at(1 - tail); std::isfinite(high)) interval.high = high;
  return interval;
}

}  // namespace stepwise::bench
