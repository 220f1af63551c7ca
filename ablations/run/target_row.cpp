// fill_from_seeds and judged_convergence: a row's result and its convergence section from every seed it trained.
#include "ablations/run/target_row.h"

#include "ablations/judges/convergence_guard.h"
#include "ablations/judges/target_verdict.h"
#include "ablations/run/result_document.h"

#include <algorithm>

namespace stepwise::ablations {

void fill_from_seeds(bench::RunResult& r, const std::vector<bench::SeedRun>& seeds, const bench::RunConfig& trained) {
  r.batch_size = trained.batch_size;
  r.clock = trained.device.is_cuda() ? "cuda_event" : "steady_clock";
  const auto failed = std::count_if(seeds.begin(), seeds.end(), [](const auto& s) { return s.status != "ok"; });
  const auto stopped =
      std::find_if(seeds.begin(), seeds.end(), [](const auto& s) { return s.stop_reason == "interrupted"; });
  if (stopped != seeds.end() || seeds.empty()) {
    r.status = "failed";
    r.stop_reason = "interrupted";
    r.reason = stopped != seeds.end() ? stopped->reason : "interrupted before the first seed";
  } else if (failed == static_cast<std::ptrdiff_t>(seeds.size())) {
    r.status = "failed";
    r.stop_reason = "failed";
    r.reason = seeds.front().reason;
  } else {
    r.stop_reason = seeds.front().stop_reason;
  }
  if (!seeds.empty()) {
    for (size_t i = 0; i < seeds.front().step_ms.size(); ++i)
      r.steps.push_back({seeds.front().step_ms[i], seeds.front().step_losses[i]});
    r.phases = seeds.front().step_phases;  // the first seed's, as its steps are the row's
    r.phase_note = seeds.front().phase_note;
  }
  bench::fill_statistics(trained, r);
}

nlohmann::json judged_convergence(const PlannedConfig& p, const bench::TargetOptions& target,
                                  const std::vector<bench::SeedRun>& seeds,
                                  const std::optional<std::vector<bench::SeedRun>>& baseline, bool is_baseline,
                                  const std::optional<RecordRule>& rule) {
  const auto guard =
      judge_convergence(seeds, baseline, math_class(p.effective), is_baseline, target.max_steps, target.step_budget);
  const auto verdict =
      !is_baseline && baseline ? std::optional(judge_against_baseline(seeds, *baseline)) : std::nullopt;
  return convergence_json(target, seeds, guard, verdict, rule);
}

}  // namespace stepwise::ablations
