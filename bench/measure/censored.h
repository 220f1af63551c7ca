// Seeds that miss the target, counted: a seed that trained to the declared horizon without crossing the target is
// right-censored there (its time to target is known only to be beyond it). Kaplan-Meier's median gives the typical
// steps or seconds over every seed, and Gehan's generalised Wilcoxon test (exact by permutation at the seed counts a
// run has) compares two rows, so a row is never judged on the seeds that happened to reach alone.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace stepwise::bench {

// One seed: its steps or seconds to target (reached), or where it stopped without crossing (censored).
struct Censored {
  double value = 0;
  bool reached = true;
};

// Kaplan-Meier's median: the smallest value at which the estimated fraction still above the target falls to 0.5 or
// below (where it sits at exactly 0.5, the midpoint to the next crossing, as R's survfit). nullopt when it never
// falls that far: fewer than half the seeds reached, so the typical seed is beyond the horizon.
std::optional<double> kaplan_meier_median(std::span<const Censored> values);

// Gehan's test of `a` against `b`. Each pair scores +1 where a's seed is surely later than b's (a crossed after b,
// or a was censored at or after b's crossing), -1 where surely sooner, 0 where censoring leaves it unknown or they
// tie. w sums the scores (above 0: `a` is slower); p is two-sided, exact over every split of the pooled seeds when
// there are at most kGehanExactSplits of them, else Mantel's normal approximation. An exact test has a smallest p it
// can give at all (min_p: the share of splits as extreme as the most extreme one): 2/20 = 0.1 at 3 seeds against 3,
// more where censoring ties pairs, so below some seed count no level of 0.05 can be met whatever the seeds did.
struct GehanTest {
  double w = 0, z = 0, p = 1;
  bool exact = false;
  double min_p = 0;  // exact: the smallest p any split of these seeds' scores gives; 0 for the approximation
};
constexpr uint64_t kGehanExactSplits = 200000;
GehanTest gehan_test(std::span<const Censored> a, std::span<const Censored> b);

// The fewest seeds a side at which an exact two-sided rank test can go below `alpha` at all (2 / C(2n, n) < alpha):
// 4 for 0.05, 5 for 0.01.
size_t seeds_for_exact_p_below(double alpha);

// A 95% percentile-bootstrap interval of the ratio of the two Kaplan-Meier medians (each side resampled apart, a
// median that is undefined taken as beyond every value, so the bound it sets is unbounded: nullopt). nullopt overall
// below two seeds a side.
struct CensoredInterval {
  std::optional<double> low, high;  // nullopt: unbounded on that side
};
std::optional<CensoredInterval> km_median_ratio_interval(std::span<const Censored> a, std::span<const Censored> b,
                                                         size_t resamples, double confidence, uint64_t seed);

}  // namespace stepwise::bench
