// A row's time and steps to target against the baseline's, as a speedup is judged, over every seed that ran: a seed
// that did not cross the target is censored where it stopped (the declared horizon), never dropped. The ratio of the
// Kaplan-Meier medians with a 95% percentile-bootstrap interval (seeded, so a table never flickers) and a two-sided
// p: Welch's on the raw values where every seed reached (no censoring to handle, and a t-test has power at three
// seeds a side where an exact rank test cannot go below 0.1), Gehan's (bench/measure/censored.h) where any missed;
// the reached fraction on each side is part of the verdict. Unlike the convergence guard, which asks "did the math
// change?", this is the figure a user reads for "how much sooner?", with its uncertainty; a row slower than the
// baseline shows as it is.
#pragma once

#include "bench/measure/censored.h"
#include "bench/measure/convergence.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stepwise::ablations {

// The bootstrap's resamples and seed: the regression gate's (reports/stepwise_report/stats/speedup.py), fixed.
constexpr size_t kVerdictResamples = 2000;
constexpr uint64_t kVerdictBootstrapSeed = 0;
// The level the two-sided p is read at (the convergence guard's, ablations/judges/convergence_guard.h).
constexpr double kVerdictAlpha = 0.05;

// One quantity (seconds or steps to target) over every seed that ran on each side, censored where it missed.
struct RatioVerdict {
  // Kaplan-Meier median over the baseline's (below 1: sooner); none where either side's typical seed is beyond the
  // horizon (fewer than half reached)
  std::optional<double> ratio;
  std::optional<double> low, high;  // its 95% interval; none below two seeds a side, or unbounded on that side
  std::optional<double> p;          // Welch's, or Gehan's where a seed missed; needs two seeds on each side
  std::string test;                 // "welch", "gehan" (exact) or "gehan-normal"; empty without a p
  // Gehan's exact test: the smallest p these seeds could give at all; where it is not below kVerdictAlpha the test
  // cannot find a difference whatever the seeds did, so no verdict is drawn from p (not judged), and seeds_needed
  // says how many seeds a side could (bench/measure/censored.h: seeds_for_exact_p_below).
  std::optional<double> min_p;
  size_t seeds_needed = 0;
  size_t n = 0, baseline_n = 0;        // seeds that reached the target
  size_t runs = 0, baseline_runs = 0;  // seeds that ran (the reached fraction is n / runs)

  // Whether p can decide at kVerdictAlpha: a test ran and its smallest attainable p lies below the level.
  bool judgeable() const { return p && (!min_p || *min_p < kVerdictAlpha); }
};

struct TargetVerdict {
  RatioVerdict time, steps;
};

// `runs` against `baseline`: every seed that ran, a seed that missed the target censored where it stopped.
TargetVerdict judge_against_baseline(const std::vector<bench::SeedRun>& runs,
                                     const std::vector<bench::SeedRun>& baseline);

// The result's convergence.verdict: {time, steps}, each {ratio, low, high, p, test, min_p, seeds_needed, n,
// baseline_n, runs, baseline_runs} (null where not given).
nlohmann::json verdict_json(const TargetVerdict& verdict);

// One quantity's verdict from the raw values (exposed for its tests).
RatioVerdict ratio_verdict(const std::vector<bench::Censored>& values, const std::vector<bench::Censored>& baseline);

// Whether a seed on either side missed the target: Gehan's test then, Welch's where every seed on both reached.
bool censored_on_either_side(const std::vector<bench::Censored>& values, const std::vector<bench::Censored>& baseline);

// Each seed that ran: its seconds or steps to target, or where it stopped without crossing (censored).
std::vector<bench::Censored> censored(const std::vector<bench::SeedRun>& runs, bool seconds);

}  // namespace stepwise::ablations
