// A row's time and steps to target against the baseline's, as a speedup is judged: the ratio of the medians with a
// 95% percentile-bootstrap interval (bench's median_ratio_interval, seeded, so a table never flickers) and Welch's
// two-sided p on the raw per-seed values. Unlike the convergence guard, which asks "did the math change?", this is the
// figure a user reads for "how much sooner?", with its uncertainty; a row slower than the baseline shows as it is.
#pragma once

#include "bench/measure/convergence.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace stepwise::ablations {

// The bootstrap's resamples and seed: the regression gate's (reports/stepwise_report/speedup.py), fixed.
constexpr size_t kVerdictResamples = 2000;
constexpr uint64_t kVerdictBootstrapSeed = 0;

// One quantity (seconds or steps to target) over the seeds that reached the target on each side.
struct RatioVerdict {
  std::optional<double> ratio;      // median over the baseline's median (below 1: sooner); needs a seed on each side
  std::optional<double> low, high;  // its 95% interval; needs two seeds on each side
  std::optional<double> p;          // Welch's two-sided p; needs two seeds on each side
  size_t n = 0, baseline_n = 0;     // seeds that reached the target
};

struct TargetVerdict {
  RatioVerdict time, steps;
};

// `runs` against `baseline`: only seeds that reached the target count (a time to target exists only for them).
TargetVerdict judge_against_baseline(const std::vector<bench::SeedRun>& runs,
                                     const std::vector<bench::SeedRun>& baseline);

// The result's convergence.verdict: {time, steps}, each {ratio, low, high, p, n, baseline_n} (null where not given).
nlohmann::json verdict_json(const TargetVerdict& verdict);

// One quantity's verdict from the raw values (exposed for its tests).
RatioVerdict ratio_verdict(const std::vector<double>& values, const std::vector<double>& baseline);

}  // namespace stepwise::ablations
