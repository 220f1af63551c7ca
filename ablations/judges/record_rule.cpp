// judge_record_rule: each seed's loss at the declared budget, from its curve, and the one-sided t-test.
#include "ablations/judges/record_rule.h"

#include "bench/measure/seed_statistics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace stepwise::ablations {

namespace {

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

nlohmann::json optional(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace

std::optional<double> loss_at(const bench::SeedRun& seed, int64_t step) {
  for (const auto& p : seed.curve)
    if (p.step == step) return p.val_loss;
  return std::nullopt;
}

RecordRule judge_record_rule(const bench::TargetOptions& options, const std::vector<bench::SeedRun>& seeds) {
  RecordRule r;
  r.target = options.loss;
  r.record_p = options.record_p;
  r.budget = options.step_budget;
  r.budget_from = options.budget_from;
  r.status = "not judged";
  if (!r.budget) {
    r.reason = "no step budget declared before the runs (" + options.budget_from +
               "): the rule judges the loss at a budget fixed in advance; give --step-budget";
    return r;
  }
  const int64_t budget = *r.budget;
  size_t diverged = 0, interrupted = 0;
  std::vector<double> values;
  std::vector<std::string> missing;  // "seed 124: stopped (max_time) before step 300"
  for (const auto& s : seeds) {
    BudgetLoss b;
    b.seed = s.seed;
    if (s.stop_reason == "interrupted") {
      b.source = "missing";
      b.reason = "interrupted before step " + std::to_string(budget);
      ++interrupted;
    } else if (s.status != "ok") {
      b.source = "missing";
      b.reason = "the seed failed: " + s.reason.value_or(s.stop_reason);
    } else if (const auto at = loss_at(s, budget)) {
      b.loss = *at;
      b.source = "trained";
    } else {
      b.source = "missing";
      b.reason = (s.stop_reason == "diverged" ? "diverged" : "stopped (" + s.stop_reason + ")") + " before step " +
                 std::to_string(budget);
      if (s.stop_reason == "diverged") ++diverged;
    }
    if (b.loss && !std::isfinite(*b.loss)) ++diverged;
    if (b.loss && std::isfinite(*b.loss)) values.push_back(*b.loss);
    if (!b.loss) missing.push_back("seed " + std::to_string(s.seed) + ": " + *b.reason);
    r.losses.push_back(std::move(b));
  }
  r.n = values.size();
  const std::string where = "validation loss at step " + std::to_string(budget) + " (" + r.budget_from + ")";
  if (diverged) {
    r.status = "does not meet the record rule";
    r.reason = std::to_string(diverged) + " seed(s) diverged: a non-finite " + where + " is not below the target";
    return r;
  }
  if (interrupted) {
    r.reason = "interrupted before every seed had a " + where + ": " + joined(missing);
    return r;
  }
  if (!missing.empty()) {
    // A record's every run trains all N steps and is evaluated there: the others alone are not the row's seeds.
    r.status = "does not meet the record rule";
    r.reason = std::to_string(missing.size()) + " of " + std::to_string(seeds.size()) + " seeds have no " + where +
               " (" + joined(missing) + "): every seed must train all " + std::to_string(budget) +
               " steps, so the rule is not judged on the others";
    return r;
  }
  if (values.size() < 2) {
    r.reason = "fewer than 2 seeds with a " + where + " (" + std::to_string(values.size()) + "); give --target-seeds=5";
    return r;
  }
  const auto test = bench::one_sample_t_test_below(values, options.loss);
  r.mean = test.mean;
  r.sd = test.sd;
  r.t = test.t;
  r.df = test.df;
  r.p = test.p;
  r.status = test.p < options.record_p ? "meets the record rule" : "does not meet the record rule";
  r.reason = "mean " + where + " " + fmt("%.4f", test.mean) + " (sd " + fmt("%.4f", test.sd) + ", n " +
             std::to_string(values.size()) + ") against the target " + fmt("%g", options.loss) +
             ": one-sided t = " + fmt("%.2f", test.t) + ", df " + fmt("%.0f", test.df) +
             ", p = " + fmt("%.3g", test.p) + (test.p < options.record_p ? " < " : " >= ") +
             fmt("%g", options.record_p);
  return r;
}

nlohmann::json record_rule_json(const RecordRule& rule) {
  auto losses = nlohmann::json::array();
  for (const auto& b : rule.losses)
    losses.push_back({{"seed", b.seed},
                      {"loss", optional(b.loss)},
                      {"source", b.source},
                      {"reason", b.reason ? nlohmann::json(*b.reason) : nlohmann::json()},
                      {"rerun_s", 0.0}});  // kept for readers of schema 2: no seed is re-run since B is declared
  return {{"test", "one-sided one-sample t-test, H0: mean loss at the budget >= target"},
          {"target_loss", rule.target},
          {"record_p", rule.record_p},
          {"budget", rule.budget ? nlohmann::json(*rule.budget) : nlohmann::json()},
          {"budget_from", rule.budget_from},
          {"losses", losses},
          {"n", rule.n},
          {"mean", optional(rule.mean)},
          {"sd", optional(rule.sd)},
          {"t", optional(rule.t)},
          {"df", optional(rule.df)},
          {"p", optional(rule.p)},
          {"reruns", 0},
          {"rerun_s", 0.0},
          {"status", rule.status},
          {"reason", rule.reason}};
}

}  // namespace stepwise::ablations
