// judge_convergence: steps to target per seed on both sides, Welch's test, the verdict and its one-line reason.
#include "ablations/judges/convergence_guard.h"

#include "ablations/judges/target_verdict.h"
#include "bench/measure/censored.h"
#include "bench/measure/seed_statistics.h"

#include <algorithm>
#include <cstdio>

namespace stepwise::ablations {

namespace {

// Steps to target per seed that ran; a seed that stopped short enters at the step it stopped at (the horizon, or
// the cap), which `stopped_at` collects.
std::vector<double> steps_of(const std::vector<bench::SeedRun>& runs, int64_t cap, size_t& not_reached,
                             std::vector<int64_t>& stopped_at) {
  std::vector<double> out;
  for (const auto& r : runs) {
    if (r.status != "ok") continue;
    if (r.reached)
      out.push_back(static_cast<double>(*r.steps));
    else {
      stopped_at.push_back(r.curve.empty() ? cap : r.curve.back().step);
      out.push_back(static_cast<double>(stopped_at.back()));
      ++not_reached;
    }
  }
  return out;
}

// Where the seeds that never reached the target are counted: "at the 300-step horizon", "at the 1000-step cap", or
// "where each stopped".
std::string where_counted(const std::vector<int64_t>& stopped_at, int64_t cap, std::optional<int64_t> horizon) {
  const auto all_at = [&](int64_t step) {
    return std::all_of(stopped_at.begin(), stopped_at.end(), [&](int64_t s) { return s == step; });
  };
  if (horizon && all_at(*horizon)) return "at the " + std::to_string(*horizon) + "-step horizon";
  if (all_at(cap)) return "at the " + std::to_string(cap) + "-step cap";
  return "at the step each stopped at (the horizon, a cap)";
}

std::optional<double> median_time(const std::vector<bench::SeedRun>& runs) {
  std::vector<double> t;
  for (const auto& r : runs)
    if (r.reached) t.push_back(*r.time_s);
  if (t.empty()) return std::nullopt;
  return bench::summarize_seeds(t).median;
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

}  // namespace

ConvergenceVerdict judge_convergence(const std::vector<bench::SeedRun>& runs,
                                     const std::optional<std::vector<bench::SeedRun>>& baseline, MathClass math,
                                     bool is_baseline, int64_t max_steps, std::optional<int64_t> horizon) {
  ConvergenceVerdict v;
  std::vector<int64_t> stopped_at;
  v.steps = steps_of(runs, max_steps, v.not_reached, stopped_at);
  if (is_baseline) {
    v.status = "baseline";
    v.reason = "the reference the other configurations' steps to target are held against";
    return v;
  }
  if (!baseline) {
    v.status = "no baseline";
    v.reason = "no baseline finished in this invocation";
    return v;
  }
  v.math = to_string(math);
  v.baseline_steps = steps_of(*baseline, max_steps, v.baseline_not_reached, stopped_at);
  if (!v.steps.empty() && !v.baseline_steps.empty()) {
    v.steps_ratio = bench::summarize_seeds(v.steps).median / bench::summarize_seeds(v.baseline_steps).median;
    const auto mine = median_time(runs), theirs = median_time(*baseline);
    if (mine && theirs) v.time_ratio = *mine / *theirs;
  }
  const std::string counts =
      std::to_string(v.steps.size()) + " vs " + std::to_string(v.baseline_steps.size()) + " seeds" +
      (v.not_reached || v.baseline_not_reached
           ? " (" + std::to_string(v.not_reached) + " vs " + std::to_string(v.baseline_not_reached) +
                 " never reached the target: counted " + where_counted(stopped_at, max_steps, horizon) + ")"
           : "");
  if (v.steps.size() < 2 || v.baseline_steps.size() < 2) {
    v.status = "not judged";
    v.reason = "too few seeds for a test: " + counts + "; give --target-seeds=3 or more";
    return v;
  }
  if (math == MathClass::Learning && (v.not_reached || v.baseline_not_reached)) {
    // A seed missed: every seed counts, one that missed censored where it stopped, by Kaplan-Meier's medians and
    // Gehan's test; Welch's on the seeds that happened to reach (or on a horizon standing in for their steps) would
    // judge the row on its fastest seeds.
    const auto mine = censored(runs, false), theirs = censored(*baseline, false);
    const auto typical = bench::kaplan_meier_median(mine), baseline_typical = bench::kaplan_meier_median(theirs);
    v.steps_ratio = typical && baseline_typical ? std::optional(*typical / *baseline_typical) : std::nullopt;
    const auto g = bench::gehan_test(mine, theirs);
    v.p = g.p;
    v.test = "Gehan's two-sided test on steps to target, seeds that missed censored where they stopped, alpha 0.05";
    const auto median_text = [](const std::optional<double>& m, const std::vector<bench::Censored>& c) {
      return m ? fmt("%.0f", *m) : "beyond " + fmt("%.0f", c.empty() ? 0 : c.back().value);
    };
    const std::string fractions = "reached " + std::to_string(v.steps.size() - v.not_reached) + "/" +
                                  std::to_string(v.steps.size()) + " vs " +
                                  std::to_string(v.baseline_steps.size() - v.baseline_not_reached) + "/" +
                                  std::to_string(v.baseline_steps.size());
    if (g.exact && g.min_p >= kConvergenceAlpha) {
      // No split of these seeds reaches the level: "no difference" would be the test's size, not the rows'.
      v.status = "not judged";
      v.reason = fractions + ": with a seed censored, Gehan's exact test at " + std::to_string(mine.size()) + " vs " +
                 std::to_string(theirs.size()) + " seeds cannot go below p = " + fmt("%.3g", g.min_p) +
                 " (the smallest any split gives), not below " + fmt("%g", kConvergenceAlpha) + "; it needs " +
                 std::to_string(bench::seeds_for_exact_p_below(kConvergenceAlpha)) +
                 " seeds a side or more (--target-seeds)";
      return v;
    }
    v.status = g.p < kConvergenceAlpha ? (g.w > 0 ? "slower to target" : "faster to target") : "no difference";
    v.reason = fractions + "; Kaplan-Meier median steps " + median_text(typical, mine) + " vs " +
               median_text(baseline_typical, theirs) + ", Gehan's w = " + fmt("%.0f", g.w) +
               ", p = " + fmt("%.3g", g.p) + (g.exact ? " (exact)" : " (normal approximation)") +
               ": class learning changes the function on purpose, so this is its result, not a fault";
    return v;
  }
  const auto test = bench::welch_t_test(v.steps, v.baseline_steps);
  v.t = test.t;
  v.df = test.df;
  v.p = test.p;
  const std::string figures = "steps to target x" + fmt("%.3f", v.steps_ratio.value_or(0)) +
                              " the baseline's (median), Welch's t = " + fmt("%.2f", test.t) + ", df " +
                              fmt("%.1f", test.df) + ", p = " + fmt("%.3g", test.p) + " over " + counts;
  if (math == MathClass::Bf16 || math == MathClass::Fp8 || math == MathClass::Batch) {
    v.status = "not judged";
    v.reason = (math == MathClass::Batch ? std::string("a different batch: a step is not the same amount of training")
                                         : to_string(math) + " declares a change of arithmetic") +
               "; for information: " + figures;
    return v;
  }
  if (math == MathClass::Learning) {
    v.status = test.p < kConvergenceAlpha ? (test.t > 0 ? "slower to target" : "faster to target") : "no difference";
    v.reason = figures + ": class learning changes the function on purpose, so this is its result, not a fault";
    return v;
  }
  if (test.p < kConvergenceAlpha) {
    v.status = test.t > 0 ? "slower to converge" : "faster to converge";
    v.reason = figures + ": a flag of class " + *v.math + " must converge as the baseline does";
    return v;
  }
  v.status = "ok";
  v.reason = figures;
  return v;
}

}  // namespace stepwise::ablations
