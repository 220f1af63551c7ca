// A row trained to a target loss, put together from its seeds in one place for the two things that train them: a
// suite's rows (ablations/run/execute.h) and the budget search's probes (ablations/run/budget_search.h). Its
// RunResult takes the first seed's steps as the row's (the throughput summary and the loss checks read them), and
// its convergence section is every seed judged: the guard, the time and steps against the baseline's seeds, and the
// speedrun's record rule at the horizon.
#pragma once

#include "ablations/judges/record_rule.h"
#include "ablations/run/plan.h"
#include "bench/measure/convergence.h"
#include "bench/measure/runner.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <vector>

namespace stepwise::ablations {

// `r`'s status, steps, phases and statistics from `seeds`, trained under `trained` (the batch the seeds ran at):
// failed where every seed failed or one was interrupted, else the first seed's stop.
void fill_from_seeds(bench::RunResult& r, const std::vector<bench::SeedRun>& seeds, const bench::RunConfig& trained);

// The convergence section of `p`'s row: the guard by the class of its flags (the baseline's own, when it is one),
// the verdict against `baseline`'s seeds (none for the baseline, or without one) and `rule`.
nlohmann::json judged_convergence(const PlannedConfig& p, const bench::TargetOptions& target,
                                  const std::vector<bench::SeedRun>& seeds,
                                  const std::optional<std::vector<bench::SeedRun>>& baseline, bool is_baseline,
                                  const std::optional<RecordRule>& rule);

}  // namespace stepwise::ablations
