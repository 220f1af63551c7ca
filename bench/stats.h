// Step-time statistics and the nvbench-style stopping rule; plain C++, no torch.
#pragma once

#include "model/enum_names.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace stepwise::bench {

struct Summary {
  size_t n = 0;
  double median = 0, mean = 0, min = 0, max = 0, p10 = 0, p90 = 0, stddev = 0;
  double cv = 0;     // stddev / mean
  double noise = 0;  // relative half-width of the 95% confidence interval of the median; NaN below two samples
};

// Linear interpolation between closest ranks (numpy's default); `sorted` must be ascending and non-empty.
double quantile(std::span<const double> sorted, double q);

// Distribution-free 95% CI of the median from order statistics, as a fraction of the median.
// With few samples the interval spans the whole range, so the noise stays large until enough steps ran.
double median_noise(std::span<const double> sorted);

// Throws std::invalid_argument on an empty sample.
Summary summarize(std::span<const double> samples);

// Speedups and their intervals are the report's (reports/stepwise_report/stats/speedup.py), computed once there for the
// terminal and report.md alike (docs/design/one-renderer.md); the engine's own statistics are the stopping rule's.

struct StopRule {
  size_t min_steps = 10;    // always measured, whatever the noise
  size_t max_steps = 200;   // hard cap on measured steps
  double max_noise = 0.01;  // stop once the median's relative CI half-width is below this
  double max_time_s = 30;   // hard wall-clock cap on the measured phase (also below min_steps: the run is then short)
};

enum class StopReason { Noise, MaxTime, MaxSteps };
inline constexpr auto kStopReasonNames = model::enum_names<StopReason>(
    "stop reason",
    {{StopReason::Noise, "noise"}, {StopReason::MaxTime, "max_time"}, {StopReason::MaxSteps, "max_steps"}});
std::string to_string(StopReason r);

// Whether to stop after `n` measured steps with the given noise and elapsed time: max_steps, else noise once min_steps
// ran, else the time cap once one step ran. (bench/python/stats.py ports this rule; tests/fixtures/stop_rule_cases.json
// holds the two equal.)
std::optional<StopReason> should_stop(const StopRule& rule, size_t n, double noise, double elapsed_s);

}  // namespace stepwise::bench
