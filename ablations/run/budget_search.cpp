// find_budgets: each row's seeds trained for the grid's budgets (branched, or from scratch down the grid), each probe
// judged by the record rule, written as a result document and announced in one line.
#include "ablations/run/budget_search.h"

#include "ablations/run/interrupt.h"
#include "ablations/run/progress_line.h"
#include "ablations/run/report_tables.h"
#include "ablations/run/result_paths.h"
#include "ablations/run/row_losses.h"
#include "ablations/run/target_row.h"
#include "ablations/tables/text_table.h"
#include "bench/atomic_file.h"
#include "bench/measure/budget_branches.h"
#include "bench/step/max_batch.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <stdexcept>

namespace stepwise::ablations {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// `p` as probed at budget n: the horizon n, its schedule ending there, the rule judged there.
PlannedConfig at_budget(const PlannedConfig& p, int64_t n) {
  auto at = p;
  auto& target = *at.run.target;
  target.step_budget = n;
  target.budget_from = "the budget search's probe";
  target.record_rule = true;
  at.run.lr_schedule.decay_steps = n;
  return at;
}

// Each seed's timed seconds of its first n steps, where it trained them all.
std::vector<double> seconds_at(const std::vector<bench::SeedRun>& seeds, int64_t n) {
  std::vector<double> out;
  for (const auto& s : seeds)
    for (const auto& point : s.curve)
      if (s.status == "ok" && point.step == n) out.push_back(point.time_s);
  return out;
}

// "meets the record rule (2.5085 +- 0.0240, n 5, t -5.12, p 3.4e-04)", or the status and why.
std::string probe_line(const RecordRule& rule) {
  if (!rule.mean || !rule.p) return rule.status + ": " + rule.reason;
  char p[32];
  std::snprintf(p, sizeof(p), *rule.p < 0.001 ? "%.1e" : "%.3f", *rule.p);
  return rule.status + " (" + fixed(*rule.mean, 4) + " +- " + fixed(rule.sd.value_or(0), 4) + ", n " +
         std::to_string(rule.n) + ", t " + fixed(rule.t.value_or(0), 2) + ", p " + p + ")";
}

// Why `p` trains each budget from scratch, or nullopt: it branches.
std::optional<std::string> from_scratch(const PlannedConfig& p, bool branches) {
  if (!branches) return "--budget-branches=off: each budget from scratch";
  return bench::cannot_branch(p.run);
}

// What one search shares while it runs: where probes go, the baseline's probes, the terminal.
class Search {
 public:
  Search(const Suite& suite, const RunContext& context, std::shared_ptr<const bench::Tokens> tokens,
         const BudgetSearchOptions& options)
      : suite_(suite), context_(context), tokens_(std::move(tokens)), options_(options), line_(options.progress) {}

  RowSearch row(const PlannedConfig& p, size_t rows);
  bool interrupted() const { return interrupt_requested(); }
  size_t failed = 0;

 private:
  BudgetProbeResult judge(const PlannedConfig& p, const bench::RunConfig& trained, int64_t n,
                          const std::vector<bench::SeedRun>& seeds);
  std::vector<bench::SeedRun> seeds_from_scratch(const PlannedConfig& p, const bench::RunConfig& trained, int64_t n,
                                                 const std::string& title);

  const Suite& suite_;
  const RunContext& context_;
  std::shared_ptr<const bench::Tokens> tokens_;
  const BudgetSearchOptions& options_;
  ProgressLine line_;
  std::map<int64_t, std::vector<bench::SeedRun>> baseline_seeds_;  // by budget: what each probe's verdict reads
  std::map<int64_t, Reference> baseline_losses_;                   // by budget: the loss check's reference
};

BudgetProbeResult Search::judge(const PlannedConfig& p, const bench::RunConfig& trained, int64_t n,
                                const std::vector<bench::SeedRun>& seeds) {
  const auto at = at_budget(p, n);
  const bool is_baseline = p.index == 0 && suite_.first_is_baseline;
  const auto& target = *at.run.target;
  BudgetProbeResult probe{n, judge_record_rule(target, seeds), seconds_at(seeds, n), nullptr};
  bench::RunResult r;
  r.optimizer = bench::to_string(at.run.optimizer());
  auto trained_at = trained;  // the batch the seeds trained at (max_batch's probe), the schedule ending at n
  trained_at.lr_schedule.decay_steps = n;
  fill_from_seeds(r, seeds, trained_at);
  const auto baseline = baseline_seeds_.find(n);
  r.convergence = judged_convergence(at, target, seeds,
                                     baseline == baseline_seeds_.end() ? std::nullopt : std::optional(baseline->second),
                                     is_baseline, probe.rule);
  const auto losses = all_losses(r);
  const auto reference = baseline_losses_.find(n);
  const auto judged =
      judge_losses(at, "libtorch", losses, r.batch_size, is_baseline,
                   reference == baseline_losses_.end() ? std::nullopt : std::optional(reference->second), std::nullopt);
  if (is_baseline && r.status == "ok") {
    baseline_seeds_[n] = seeds;
    baseline_losses_[n] = {losses, r.batch_size};
  }
  if (r.status != "ok") ++failed;
  auto probe_context = context_;
  probe_context.run_id = context_.run_id + "_budget_" + std::to_string(n);
  probe.document = result_document(probe_context, suite_, at, "libtorch", &r, judged.check);
  const ResultPaths paths(std::optional((options_.folder / ("budget_" + std::to_string(n))).string()), std::nullopt,
                          probe_context.run_id, suite_.name);
  bench::check_writable_directory(paths.folder());
  bench::write_file_atomically(paths.of(at, "libtorch"), probe.document.dump(1) + "\n");
  return probe;
}

std::vector<bench::SeedRun> Search::seeds_from_scratch(const PlannedConfig& p, const bench::RunConfig& trained,
                                                       int64_t n, const std::string& title) {
  const auto at = at_budget(p, n);
  const auto& target = *at.run.target;
  std::vector<bench::SeedRun> seeds;
  for (int64_t s = 0; s < target.seeds && !interrupted(); ++s) {
    auto seeded = trained;
    seeded.seed = trained.seed + static_cast<uint64_t>(s);
    seeded.lr_schedule.decay_steps = n;
    const std::string seed_title =
        title + " N " + std::to_string(n) + " seed " + std::to_string(s + 1) + "/" + std::to_string(target.seeds);
    line_.begin(seed_title);
    seeds.push_back(bench::train_to_target(
        seeded, tokens_, options_.val_tokens, target,
        [&](const bench::SeedRun& r) { line_.update_text(convergence_progress(r, target.loss)); },
        &interrupt_requested()));
    line_.end();
  }
  return seeds;
}

RowSearch Search::row(const PlannedConfig& p, size_t rows) {
  RowSearch row;
  row.index = p.index;
  row.label = p.row.label;
  row.added = p.row.added;
  const std::string title =
      "[" + suite_.name + " " + std::to_string(p.index + 1) + "/" + std::to_string(rows) + "] " + p.row.label;
  if (p.skip_reason || p.run.host_allocator) {
    row.skip_reason = p.skip_reason.value_or(
        "host_allocator starts its row in a process of its own, and the budget search runs every row in this one");
    std::cout << title << ": skipped (" << *row.skip_reason << ")" << std::endl;
    return row;
  }
  const auto began = std::chrono::steady_clock::now();
  const auto& target = *p.run.target;
  const auto& grid = options_.grid;
  auto trained = p.run;
  if (trained.max_batch) {  // the probe's batch, as a row trained to a target trains at it
    line_.begin(title + " (probing the batch)");
    trained.batch_size = bench::probe_max_batch(trained).chosen;
    line_.end();
  }
  row.from_scratch = from_scratch(p, options_.branches);
  row.branched = !row.from_scratch;
  const auto announce = [&](const BudgetProbeResult& probe) {
    std::cout << title << " at N " << probe.budget << ": " << probe_line(probe.rule) << std::endl;
  };
  if (row.branched) {
    // One line per seed on the longest budget's schedule, each shorter budget's cool-down branched off it.
    std::vector<std::vector<bench::SeedRun>> at(grid.size());
    for (int64_t s = 0; s < target.seeds && !interrupted(); ++s) {
      auto seeded = trained;
      seeded.seed = trained.seed + static_cast<uint64_t>(s);
      const std::string seed_title = title + " seed " + std::to_string(s + 1) + "/" + std::to_string(target.seeds) +
                                     " (" + std::to_string(grid.size()) + " budgets branched)";
      line_.begin(seed_title);
      auto runs = bench::train_to_budgets(
          seeded, tokens_, options_.val_tokens, target, grid,
          [&](const bench::SeedRun& r) { line_.update_text(convergence_progress(r, target.loss)); },
          &interrupt_requested());
      line_.end();
      const auto& longest = runs.back();
      std::cout << seed_title << ": "
                << (longest.status == "ok" ? "trained" : longest.status + " (" + longest.reason.value_or("") + ")")
                << ", " << bench::branched_steps(trained.lr_schedule, grid) << " steps in all" << std::endl;
      for (size_t i = 0; i < grid.size(); ++i) at[i].push_back(std::move(runs[i]));
    }
    row.steps_per_seed = bench::branched_steps(trained.lr_schedule, grid);
    if (!interrupted())
      for (size_t i = 0; i < grid.size(); ++i) {
        row.probes.push_back(judge(p, trained, grid[i], at[i]));
        announce(row.probes.back());
      }
  } else {
    // From the grid's last budget down, until the rule first does not hold there.
    std::vector<BudgetProbe> outcomes;
    while (const auto n = next_budget_down(grid, outcomes)) {
      auto seeds = seeds_from_scratch(p, trained, *n, title);
      if (interrupted()) break;
      row.steps_per_seed += *n;
      row.probes.insert(row.probes.begin(), judge(p, trained, *n, seeds));
      announce(row.probes.front());
      outcomes.push_back({*n, outcome_of(row.probes.front().rule)});
    }
  }
  std::vector<BudgetProbe> outcomes;
  for (const auto& probe : row.probes) outcomes.push_back({probe.budget, outcome_of(probe.rule)});
  row.verdict = judge_budgets(grid, outcomes);
  row.wall_s = seconds_since(began);
  if (!interrupted()) std::cout << title << ": " << row.verdict.summary << std::endl;
  return row;
}

}  // namespace

std::vector<int64_t> geometric_grid(int64_t first, double ratio, int64_t last) {
  if (first < 1 || !(ratio > 1) || last < first)
    throw std::invalid_argument("a budget grid needs 1 <= first <= last and a ratio above 1 (got first " +
                                std::to_string(first) + ", ratio " + fixed(ratio, 3) + ", last " +
                                std::to_string(last) + ")");
  std::vector<int64_t> grid;
  for (double n = static_cast<double>(first); static_cast<int64_t>(std::ceil(n)) < last; n *= ratio) {
    const auto step = static_cast<int64_t>(std::ceil(n));
    if (grid.empty() || step > grid.back()) grid.push_back(step);
  }
  grid.push_back(last);
  return grid;
}

nlohmann::json budget_plan_json(const std::vector<PlannedConfig>& planned, const std::vector<int64_t>& grid,
                                bool branches) {
  auto rows = nlohmann::json::array();
  for (const auto& p : planned) {
    const auto why = from_scratch(p, branches);
    int64_t all = 0;
    for (const auto n : grid) all += n;
    rows.push_back({{"index", p.index},
                    {"branched", !why},
                    {"from_scratch", why ? nlohmann::json(*why) : nlohmann::json()},
                    // branched: what a seed trains; from scratch: at most, the whole grid (the scan down stops at the
                    // first budget where the rule fails)
                    {"steps_per_seed", why ? all : bench::branched_steps(p.run.lr_schedule, grid)}});
  }
  return {{"grid", grid}, {"rows", rows}};
}

std::string budget_plan_text(const std::vector<PlannedConfig>& planned, const std::string& grid_from,
                             const std::vector<int64_t>& grid, bool branches) {
  std::vector<std::string> budgets;
  for (const auto n : grid) budgets.push_back(std::to_string(n));
  std::string out = "budget search: grid " + joined(budgets, ", ") + " (" + grid_from + ")\n";
  for (const auto& row : budget_plan_json(planned, grid, branches)["rows"]) {
    const auto steps = with_commas(row["steps_per_seed"].get<double>());
    out += "  " + std::to_string(row["index"].get<int>()) + ": " +
           (row["branched"].get<bool>()
                ? "branched, " + steps + " steps a seed"
                : "from scratch, at most " + steps + " steps a seed (" + row["from_scratch"].get<std::string>() + ")") +
           "\n";
  }
  return out;
}

BudgetSearchOutcome run_budget_search(const Suite& suite, const std::vector<PlannedConfig>& planned,
                                      const RunContext& context, std::shared_ptr<const bench::Tokens> tokens,
                                      const bench::TargetOptions& target, const BudgetSearchOptions& options) {
  bench::check_writable_directory(options.folder);
  const auto file = options.folder / "budget.json";
  // Written now and again at the end: ./report reads the folder as a search (its probes left out) while under way.
  bench::write_file_atomically(file, budget_json(suite, context, options, target, nullptr).dump(1) + "\n");
  std::cout << budget_plan_text(planned, options.grid_from, options.grid, options.branches) << std::flush;
  const auto outcome = find_budgets(suite, planned, context, std::move(tokens), options);
  const auto doc = budget_json(suite, context, options, target, &outcome);
  bench::write_file_atomically(file, doc.dump(1) + "\n");
  if (!outcome.interrupted) {
    std::cout << "\n";
    show_report_tables({options.folder}, ReportSection::Searches);
  }
  std::cout << (outcome.interrupted ? "interrupted; the probes so far are in " : "budget search in ")
            << options.folder.string() << " (budget.json; ./report " << options.folder.string() << ")" << std::endl;
  return outcome;
}

BudgetSearchOutcome find_budgets(const Suite& suite, const std::vector<PlannedConfig>& planned,
                                 const RunContext& context, std::shared_ptr<const bench::Tokens> tokens,
                                 const BudgetSearchOptions& options) {
  BudgetSearchOutcome outcome;
  const auto began = std::chrono::steady_clock::now();
  Search search(suite, context, std::move(tokens), options);
  for (const auto& p : planned) {
    auto row = search.row(p, planned.size());
    if (search.interrupted()) {
      outcome.interrupted = true;
      break;
    }
    outcome.rows.push_back(std::move(row));
  }
  outcome.failed = search.failed;
  outcome.wall_s = seconds_since(began);
  return outcome;
}

}  // namespace stepwise::ablations
