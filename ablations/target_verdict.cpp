// judge_against_baseline: the reached seeds' seconds and steps on both sides, their ratio of medians, its bootstrap
// interval and Welch's p.
#include "ablations/target_verdict.h"

#include "bench/measure/seed_statistics.h"
#include "bench/measure/stats.h"

namespace stepwise::ablations {

namespace {

std::vector<double> reached(const std::vector<bench::SeedRun>& runs, bool seconds) {
  std::vector<double> out;
  for (const auto& r : runs)
    if (r.status == "ok" && r.reached) out.push_back(seconds ? *r.time_s : static_cast<double>(*r.steps));
  return out;
}

nlohmann::json optional(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

nlohmann::json ratio_json(const RatioVerdict& v) {
  return {{"ratio", optional(v.ratio)},
          {"low", optional(v.low)},
          {"high", optional(v.high)},
          {"p", optional(v.p)},
          {"n", v.n},
          {"baseline_n", v.baseline_n}};
}

}  // namespace

nlohmann::json verdict_json(const TargetVerdict& verdict) {
  return {{"time", ratio_json(verdict.time)},
          {"steps", ratio_json(verdict.steps)},
          {"interval", "95% percentile bootstrap of the ratio of medians (2000 resamples, seed 0)"},
          {"test", "Welch's two-sided t-test on the per-seed values"}};
}

RatioVerdict ratio_verdict(const std::vector<double>& values, const std::vector<double>& baseline) {
  RatioVerdict v;
  v.n = values.size();
  v.baseline_n = baseline.size();
  if (values.empty() || baseline.empty()) return v;
  const double theirs = bench::summarize_seeds(baseline).median;
  if (theirs != 0) v.ratio = bench::summarize_seeds(values).median / theirs;
  if (values.size() < 2 || baseline.size() < 2) return v;
  if (const auto interval =
          bench::median_ratio_interval(values, baseline, kVerdictResamples, 0.95, kVerdictBootstrapSeed)) {
    v.low = interval->low;
    v.high = interval->high;
  }
  v.p = bench::welch_t_test(values, baseline).p;
  return v;
}

TargetVerdict judge_against_baseline(const std::vector<bench::SeedRun>& runs,
                                     const std::vector<bench::SeedRun>& baseline) {
  return {ratio_verdict(reached(runs, true), reached(baseline, true)),
          ratio_verdict(reached(runs, false), reached(baseline, false))};
}

}  // namespace stepwise::ablations
