// train_to_budgets: one line of training on the longest budget's schedule, paused at each shorter budget's branch
// point, where a copy of the state cools down to that budget and is put back.
#include "bench/measure/budget_branches.h"

#include "bench/device.h"
#include "bench/interrupted.h"
#include "bench/measure/seed_training.h"
#include "bench/oom.h"

#include <stdexcept>

namespace stepwise::bench {

namespace {

// The schedule as it runs for budget n.
LrSchedule over(LrSchedule schedule, int64_t n) {
  schedule.decay_steps = n;
  return schedule;
}

// The run a budget the seed never got to records: the seed's failure, or where the line stopped.
SeedRun failed_run(uint64_t seed, const std::string& stop_reason, const std::string& reason) {
  SeedRun run;
  run.seed = seed;
  run.status = "failed";
  run.stop_reason = stop_reason;
  run.reason = reason;
  return run;
}

}  // namespace

std::optional<int64_t> branch_point(const LrSchedule& schedule, int64_t n) {
  switch (schedule.kind) {
    case LrScheduleKind::Constant: return n;
    case LrScheduleKind::Trapezoid: return n - over(schedule, n).cooldown();
    case LrScheduleKind::Cosine: break;
  }
  return std::nullopt;
}

std::optional<std::string> cannot_branch(const RunConfig& config) {
  if (config.compile) return "compile's captured step is not branched here: each budget trains from scratch";
  if (!branch_point(config.lr_schedule, 1))
    return "its " + to_string(config.lr_schedule.kind) +
           " schedule decays over the whole budget from its first step: each budget trains from scratch";
  return std::nullopt;
}

int64_t branched_steps(const LrSchedule& schedule, const std::vector<int64_t>& budgets) {
  int64_t steps = 0;
  for (size_t i = 0; i < budgets.size(); ++i) {
    const auto at = branch_point(schedule, budgets[i]);
    if (!at)
      steps += budgets[i];
    else if (i + 1 == budgets.size())
      steps += budgets[i];
    else
      steps += budgets[i] - *at;
  }
  return steps;
}

std::vector<SeedRun> train_to_budgets(const RunConfig& config, const std::shared_ptr<const Tokens>& train,
                                      const std::shared_ptr<const Tokens>& val, const TargetOptions& options,
                                      const std::vector<int64_t>& budgets, const ConvergenceProgress& on_progress,
                                      const std::atomic<bool>* interrupted) {
  if (budgets.empty()) return {};
  if (const auto why = cannot_branch(config)) throw std::invalid_argument("train_to_budgets: " + *why);
  std::vector<SeedRun> runs;
  const int64_t longest = budgets.back();
  auto on_line = options;  // the line trains on the longest budget's horizon
  on_line.step_budget = longest;
  auto lined = config;
  lined.lr_schedule = over(config.lr_schedule, longest);
  TrainingLine line;
  line.run.seed = config.seed;
  try {
    use_device(config.device);
    SeedTraining training(lined, train, val, on_line, line, on_progress, interrupted);
    for (size_t i = 0; i + 1 < budgets.size(); ++i) {
      const int64_t n = budgets[i], at = *branch_point(config.lr_schedule, n);
      if (i > 0 && at < *branch_point(config.lr_schedule, budgets[i - 1]))
        throw std::invalid_argument("train_to_budgets: the branch points must not fall as the budgets grow");
      training.advance(line, on_line, at);
      TrainingLine branch = line;
      if (!line.stopped) {
        auto own = options;
        own.step_budget = n;
        const auto paused = at < n ? std::optional(training.copy()) : std::nullopt;
        training.set_schedule_steps(n);
        training.advance(branch, own, n);
        training.set_schedule_steps(longest);
        if (paused) training.put_back(*paused);
      }
      runs.push_back(std::move(branch.run));
    }
    training.advance(line, on_line, longest);
    runs.push_back(std::move(line.run));
  } catch (const Interrupted& e) {
    while (runs.size() < budgets.size()) runs.push_back(failed_run(config.seed, "interrupted", e.what()));
  } catch (const std::exception& e) {
    const auto what = short_message(e);
    const auto reason = is_out_of_memory(e) && what.rfind("out of memory", 0) != 0 ? "out of memory: " + what : what;
    while (runs.size() < budgets.size()) runs.push_back(failed_run(config.seed, "failed", reason));
  }
  try {
    release_cached_memory(config.device);
  } catch (const std::exception&) {
  }
  return runs;
}

}  // namespace stepwise::bench
