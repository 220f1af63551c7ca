// The speedrun's own verdict (speedrun-anchors §T12): over a row's seeds, the validation loss at a step budget B fixed
// before the runs must lie below the target by a one-sided one-sample t-test, H0 mean >= target, at p < record_p
// (0.01). B is the declared horizon (--step-budget, or the suite's own), the same for every row, and the schedule ends
// there; every seed trained to exactly B and was evaluated there (bench/measure/convergence.h). A row's own steps to
// target never set B: at its median about half its seeds are still above the target, so the mean sits on it and the
// rule could not pass by construction.
#pragma once

#include "bench/measure/convergence.h"
#include "bench/run_config.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stepwise::ablations {

// One seed's validation loss at the budget, and where it came from.
struct BudgetLoss {
  uint64_t seed = 0;
  std::optional<double> loss;
  std::string source;                 // "trained" (the seed's own run evaluated at B), "missing"
  std::optional<std::string> reason;  // why missing
};

struct RecordRule {
  double target = 0, record_p = 0.01;
  std::optional<int64_t> budget;
  std::string budget_from;  // TargetOptions::budget_from: "--step-budget", "the suite's own for preset tiny", ...
  std::vector<BudgetLoss> losses;
  std::optional<double> mean, sd, t, df, p;
  size_t n = 0;        // seeds with a loss at the budget
  std::string status;  // "meets the record rule", "does not meet the record rule", "not judged"
  std::string reason;  // one line with the figures, or why not judged
};

// The validation loss evaluated exactly at `step`, if the seed's curve has that evaluation.
std::optional<double> loss_at(const bench::SeedRun& seed, int64_t step);

// The rule over `seeds` (the row's, every seed that ran) at options.step_budget: a seed that failed, diverged or hit
// a cap before B has no loss there, and the row does not meet the rule (a record's every run trains all B steps; the
// others are never judged alone), a non-finite loss is not below the target; a seed interrupted before B, fewer than
// two seeds, or no declared budget is not judged.
RecordRule judge_record_rule(const bench::TargetOptions& options, const std::vector<bench::SeedRun>& seeds);

// The result's convergence.record_rule (results/schema.json).
nlohmann::json record_rule_json(const RecordRule& rule);

}  // namespace stepwise::ablations
