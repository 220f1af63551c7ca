// judge_record_rule: the budget, each seed's loss at it (from its curve or a re-run), and the one-sided t-test.
#include "ablations/record_rule.h"

#include "bench/measure/seed_statistics.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace stepwise::ablations {

namespace {

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

nlohmann::json optional(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace

std::optional<int64_t> budget_for(const bench::TargetOptions& options, const std::vector<bench::SeedRun>& seeds) {
  if (options.step_budget) return options.step_budget;
  std::vector<int64_t> steps;
  for (const auto& s : seeds)
    if (s.status == "ok" && s.reached) steps.push_back(*s.steps);
  if (steps.empty()) return std::nullopt;
  std::sort(steps.begin(), steps.end());
  // The upper median: of an even count the larger middle value, so B is a step a seed was evaluated at.
  return steps[steps.size() / 2];
}

std::optional<double> loss_at(const bench::SeedRun& seed, int64_t step) {
  for (const auto& p : seed.curve)
    if (p.step == step) return p.val_loss;
  return std::nullopt;
}

bench::TargetOptions rerun_options(const bench::TargetOptions& options, int64_t budget) {
  auto o = options;
  o.eval_every = budget;
  o.max_steps = budget;
  o.step_budget.reset();
  o.seeds = 1;
  return o;
}

RecordRule judge_record_rule(const bench::TargetOptions& options, const std::vector<bench::SeedRun>& seeds,
                             const BudgetRerun& rerun) {
  RecordRule r;
  r.target = options.loss;
  r.record_p = options.record_p;
  r.budget = budget_for(options, seeds);
  r.budget_from = options.step_budget ? "--step-budget" : r.budget ? "upper median of steps to target" : "none";
  r.status = "not judged";
  if (!r.budget) {
    r.reason =
        "no seed reached the target, so there is no median steps to target to set the budget; give "
        "--step-budget";
    return r;
  }
  const int64_t budget = *r.budget;
  size_t diverged = 0;
  std::vector<double> values;
  for (const auto& s : seeds) {
    BudgetLoss b;
    b.seed = s.seed;
    if (s.status != "ok") {
      b.source = "missing";
      b.reason = "the seed failed: " + s.reason.value_or(s.stop_reason);
    } else if (const auto at = loss_at(s, budget)) {
      b.loss = *at;
      b.source = "trained";
    } else if (s.stop_reason == "diverged") {
      b.source = "missing";
      b.reason = "diverged before step " + std::to_string(budget);
      ++diverged;
    } else {
      const auto began = std::chrono::steady_clock::now();
      const auto again = rerun(s, rerun_options(options, budget));
      b.rerun_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      r.rerun_s += b.rerun_s;
      ++r.reruns;
      if (const auto measured = again.status == "ok" ? loss_at(again, budget) : std::nullopt) {
        b.loss = *measured;
        b.source = "re-run";
      } else {
        b.source = "missing";
        b.reason = "its re-run to step " + std::to_string(budget) + " stopped short (" +
                   again.reason.value_or(again.stop_reason) + ")";
        if (again.stop_reason == "diverged") ++diverged;
      }
    }
    if (b.loss && !std::isfinite(*b.loss)) ++diverged;
    if (b.loss && std::isfinite(*b.loss)) values.push_back(*b.loss);
    r.losses.push_back(std::move(b));
  }
  r.n = values.size();
  const std::string where = "validation loss at step " + std::to_string(budget) + " (" + r.budget_from + ")";
  if (diverged) {
    r.status = "does not meet the record rule";
    r.reason = std::to_string(diverged) + " seed(s) diverged: a non-finite " + where + " is not below the target";
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

std::string rerun_line(const bench::SeedRun& again) {
  if (again.status != "ok" || again.curve.empty()) return "stopped short: " + again.reason.value_or(again.stop_reason);
  return "validation loss " + fmt("%.4f", again.curve.back().val_loss) + " at step " +
         std::to_string(again.curve.back().step) + " (" + fmt("%.1f", again.eval_s + again.warmup_s) +
         " s evaluating and warm-up, " + fmt("%.1f", again.curve.back().time_s) + " s training, off the row's clock)";
}

nlohmann::json record_rule_json(const RecordRule& rule) {
  auto losses = nlohmann::json::array();
  for (const auto& b : rule.losses)
    losses.push_back({{"seed", b.seed},
                      {"loss", optional(b.loss)},
                      {"source", b.source},
                      {"reason", b.reason ? nlohmann::json(*b.reason) : nlohmann::json()},
                      {"rerun_s", b.rerun_s}});
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
          {"reruns", rule.reruns},
          {"rerun_s", rule.rerun_s},
          {"status", rule.status},
          {"reason", rule.reason}};
}

}  // namespace stepwise::ablations
