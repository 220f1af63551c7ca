// judge_against_baseline: every seed's seconds and steps on both sides (censored where it missed), the ratio of the
// Kaplan-Meier medians, its bootstrap interval and Gehan's p.
#include "ablations/judges/target_verdict.h"

#include "bench/measure/seed_statistics.h"

#include <algorithm>

namespace stepwise::ablations {

namespace {

nlohmann::json optional(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

nlohmann::json ratio_json(const RatioVerdict& v) {
  return {{"ratio", optional(v.ratio)},
          {"low", optional(v.low)},
          {"high", optional(v.high)},
          {"p", optional(v.p)},
          {"test", v.test.empty() ? nlohmann::json() : nlohmann::json(v.test)},
          {"min_p", optional(v.min_p)},
          {"seeds_needed", v.seeds_needed ? nlohmann::json(v.seeds_needed) : nlohmann::json()},
          {"n", v.n},
          {"baseline_n", v.baseline_n},
          {"runs", v.runs},
          {"baseline_runs", v.baseline_runs}};
}

}  // namespace

nlohmann::json verdict_json(const TargetVerdict& verdict) {
  return {{"time", ratio_json(verdict.time)},
          {"steps", ratio_json(verdict.steps)},
          {"interval",
           "95% percentile bootstrap of the ratio of Kaplan-Meier medians (2000 resamples, seed 0); null: unbounded"},
          {"test",
           "Welch's two-sided t-test where every seed reached the target; Gehan's two-sided test, seeds that missed "
           "censored where they stopped, where any missed (not judged where its smallest attainable p, min_p, is not "
           "below 0.05)"}};
}

bool censored_on_either_side(const std::vector<bench::Censored>& values, const std::vector<bench::Censored>& baseline) {
  const auto all_reached = [](const auto& c) {
    return std::all_of(c.begin(), c.end(), [](const auto& x) { return x.reached; });
  };
  return !all_reached(values) || !all_reached(baseline);
}

std::vector<bench::Censored> censored(const std::vector<bench::SeedRun>& runs, bool seconds) {
  std::vector<bench::Censored> out;
  for (const auto& r : runs) {
    if (r.status != "ok") continue;
    if (r.reached)
      out.push_back({seconds ? *r.time_s : static_cast<double>(*r.steps), true});
    else if (!r.curve.empty())  // where it stopped: the horizon (or a cap), still above the target
      out.push_back({seconds ? r.curve.back().time_s : static_cast<double>(r.curve.back().step), false});
  }
  return out;
}

RatioVerdict ratio_verdict(const std::vector<bench::Censored>& values, const std::vector<bench::Censored>& baseline) {
  RatioVerdict v;
  const auto count = [](const auto& c) {
    return static_cast<size_t>(std::count_if(c.begin(), c.end(), [](const auto& x) { return x.reached; }));
  };
  v.n = count(values);
  v.baseline_n = count(baseline);
  v.runs = values.size();
  v.baseline_runs = baseline.size();
  const auto mine = bench::kaplan_meier_median(values), theirs = bench::kaplan_meier_median(baseline);
  if (mine && theirs && *theirs != 0) v.ratio = *mine / *theirs;
  if (values.size() < 2 || baseline.size() < 2) return v;
  if (const auto interval =
          bench::km_median_ratio_interval(values, baseline, kVerdictResamples, 0.95, kVerdictBootstrapSeed)) {
    v.low = interval->low;
    v.high = interval->high;
  }
  if (censored_on_either_side(values, baseline)) {
    const auto g = bench::gehan_test(values, baseline);
    v.p = g.p;
    v.test = g.exact ? "gehan" : "gehan-normal";
    if (g.exact) v.min_p = g.min_p;
    if (!v.judgeable()) v.seeds_needed = bench::seeds_for_exact_p_below(kVerdictAlpha);
    return v;
  }
  std::vector<double> a, b;
  for (const auto& x : values) a.push_back(x.value);
  for (const auto& x : baseline) b.push_back(x.value);
  v.p = bench::welch_t_test(a, b).p;
  v.test = "welch";
  return v;
}

TargetVerdict judge_against_baseline(const std::vector<bench::SeedRun>& runs,
                                     const std::vector<bench::SeedRun>& baseline) {
  return {ratio_verdict(censored(runs, true), censored(baseline, true)),
          ratio_verdict(censored(runs, false), censored(baseline, false))};
}

}  // namespace stepwise::ablations
