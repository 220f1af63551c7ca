// The speedrun's own verdict (speedrun-anchors §T12): over a row's seeds, the validation loss at a fixed step budget B
// must lie below the target by a one-sided one-sample t-test, H0 mean >= target, at p < record_p (0.01). B is
// --step-budget, or the row's upper median of steps to target (a step some seed was evaluated at). The loss at B is
// measured, never guessed: a seed with no evaluation at B (it reached the target earlier and stopped) is re-run from
// its initial weights to exactly B steps with one evaluation there, its time kept apart from the time to target.
#pragma once

#include "bench/measure/convergence.h"
#include "bench/run_config.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace stepwise::ablations {

// One seed's validation loss at the budget, and where it came from.
struct BudgetLoss {
  uint64_t seed = 0;
  std::optional<double> loss;
  std::string source;  // "trained" (the seed's own run evaluated at B), "re-run" (to exactly B), "missing"
  std::optional<std::string> reason;  // why missing
  double rerun_s = 0;                 // a re-run's wall seconds (training, warm-up and evaluations)
};

struct RecordRule {
  double target = 0, record_p = 0.01;
  std::optional<int64_t> budget;
  std::string budget_from;  // "--step-budget", "upper median of steps to target", or "none"
  std::vector<BudgetLoss> losses;
  std::optional<double> mean, sd, t, df, p;
  size_t n = 0;        // seeds with a loss at the budget
  size_t reruns = 0;   // seeds re-run to the budget
  double rerun_s = 0;  // their wall seconds, off the row's time-to-target figures
  std::string status;  // "meets the record rule", "does not meet the record rule", "not judged"
  std::string reason;  // one line with the figures, or why not judged
};

// B: the given budget, else the upper median of the steps to target over the seeds that reached it (of an even count
// the larger middle value, a step that seed was evaluated at); nullopt when no seed reached the target.
std::optional<int64_t> budget_for(const bench::TargetOptions& options, const std::vector<bench::SeedRun>& seeds);

// The validation loss evaluated exactly at `step`, if the seed's curve has that evaluation.
std::optional<double> loss_at(const bench::SeedRun& seed, int64_t step);

// The options of a re-run to exactly `budget` steps: its only evaluation after the untrained model's is at the budget
// (K and the step cap both the budget), so the target, kept, cannot stop it earlier; no step budget of its own;
// warm-up and the time cap as the row's.
bench::TargetOptions rerun_options(const bench::TargetOptions& options, int64_t budget);

// Runs `seed` again from its initial weights under `options` (rerun_options), in the row's implementation.
using BudgetRerun = std::function<bench::SeedRun(const bench::SeedRun& seed, const bench::TargetOptions& options)>;

// The rule over `seeds` (the row's, every seed that ran): a seed that failed or diverged before B has no loss there;
// any that diverged fails the rule (a non-finite loss is not below the target), fewer than two losses is not judged.
RecordRule judge_record_rule(const bench::TargetOptions& options, const std::vector<bench::SeedRun>& seeds,
                             const BudgetRerun& rerun);

// A re-run's one line for the console: the loss it measured at its last evaluation, or why it stopped short.
std::string rerun_line(const bench::SeedRun& again);

// The result's convergence.record_rule (results/schema.json).
nlohmann::json record_rule_json(const RecordRule& rule);

}  // namespace stepwise::ablations
