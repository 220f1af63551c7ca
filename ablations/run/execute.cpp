// execute_suite: each planned configuration run (or skipped) by each implementation, loss-checked against the suite's
// baseline, recorded in its result document and written at once, so nothing measured is lost when a later one fails
// or is interrupted. Running a row is the two functions below it; judging its losses is ablations/run/row_losses.h.
#include "ablations/run/execute.h"

#include "ablations/judges/record_rule.h"
#include "ablations/run/interrupt.h"
#include "ablations/run/progress_line.h"
#include "ablations/run/row_losses.h"
#include "ablations/run/target_row.h"
#include "ablations/run/test_hooks.h"
#include "bench/atomic_file.h"
#include "bench/child_process.h"
#include "bench/host_allocator.h"
#include "bench/measure/runner.h"
#include "bench/python/python_step.h"
#include "bench/step/max_batch.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

namespace stepwise::ablations {

namespace {

// The result --resume may keep: where this row's file goes, ok, and measured under exactly these settings.
std::optional<nlohmann::json> earlier_result(const std::filesystem::path& path, const std::string& hash) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    auto doc = nlohmann::json::parse(in);
    if (doc.value("status", "") == "ok" && doc["config"].value("settings_hash", "") == hash) return doc;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// A Python row's request carries the result's config section of the run it makes (its batch, its seed).
bench::DescribeConfig describing(const PlannedConfig& p) {
  return [p](const bench::RunConfig& run) {
    auto as_run = p;
    as_run.run = run;
    return config_json(as_run);
  };
}

// Runs one row: the engine (with the data-parallel hooks), or a Python implementation on the batch the engine's row
// measured at. A configuration that failed on any rank counts as failed on all.
bench::RunResult run_row(const Suite& suite, const PlannedConfig& p, const bench::RunConfig& run,
                         const std::string& implementation, const std::optional<Reference>& engine,
                         const std::shared_ptr<const bench::Tokens>& tokens,
                         const std::shared_ptr<bench::Collectives>& collectives, ProgressLine& line) {
  if (implementation != "libtorch") {
    auto python_run = run;
    if (engine) python_run.batch_size = engine->batch;  // max_batch: the batch the engine's probe chose
    python_run.max_batch = false;
    return bench::run_python_configuration(python_run, describing(p), tokens, implementation, &interrupt_requested());
  }
  bench::RunHooks hooks{[&](const bench::Progress& pr) { line.update(pr); }, &interrupt_requested(), collectives,
                        injected_rank_failure(collectives)};
  auto r = bench::run_configuration(run, tokens, hooks);
  if (collectives && collectives->any_failed(suite.name + "/" + std::to_string(p.index), r.status == "failed") &&
      r.status == "ok") {
    r.status = "failed";
    r.reason = "failed on another rank";
  }
  return r;
}

// --target-loss: the row trains to the target on each seed (bench/measure/convergence.h), in the engine or in Python
// (bench/python/python_step.h) on the batch the engine's row trained at. Its RunResult carries the first seed's steps
// (the throughput summary, and the loss checks against the baseline's first seed and the engine's, which saw the same
// weights and batches) and every seed in `convergence`; `seeds` gets the runs for the convergence guard, `rule` the
// speedrun's record rule at the declared budget.
bench::RunResult train_row(const std::string& title, const PlannedConfig& p, const bench::RunConfig& run,
                           const std::string& implementation, const std::optional<Reference>& engine,
                           const std::shared_ptr<const bench::Tokens>& tokens, const ExecuteOptions& options,
                           bool leader, ProgressLine& line, std::vector<bench::SeedRun>& seeds,
                           std::optional<RecordRule>& rule) {
  const auto& target = *run.target;
  bench::RunResult r;
  r.implementation = implementation;
  r.optimizer = bench::to_string(run.optimizer());
  auto trained = run;
  if (implementation != "libtorch") {
    if (engine) trained.batch_size = engine->batch;
    trained.max_batch = false;
  } else if (run.max_batch) {  // the probe's batch, as a throughput row measures at it: each seed then trains at it
    line.begin(title + " (probing the batch)");
    r.probe = bench::probe_max_batch(run);
    line.end();
    trained.batch_size = r.probe->chosen;
  }
  for (int64_t s = 0; s < target.seeds && !interrupt_requested(); ++s) {
    auto seeded = trained;
    seeded.seed = run.seed + static_cast<uint64_t>(s);
    const std::string seed_title = title + " seed " + std::to_string(s + 1) + "/" + std::to_string(target.seeds);
    const auto progress = [&](const bench::SeedRun& r) { line.update_text(convergence_progress(r, target.loss)); };
    line.begin(seed_title);
    if (implementation == "libtorch") {
      seeds.push_back(
          bench::train_to_target(seeded, tokens, options.val_tokens, target, progress, &interrupt_requested()));
    } else {
      auto python = bench::train_python_to_target(seeded, describing(p), tokens, options.val_tokens, target,
                                                  implementation, progress, &interrupt_requested());
      seeds.push_back(std::move(python.run));
      if (s == 0) {  // the first seed's, as its steps are the row's
        if (!python.optimizer.empty()) r.optimizer = python.optimizer;
        r.compile_s = python.compile_s;
        r.python_versions = python.python_versions;
      }
    }
    line.end();
    if (leader) std::cout << seed_title << ": " << seed_line(seeds.back(), target.loss) << std::endl;
  }
  // Every seed trained to the declared budget and was evaluated there: the rule reads its curve.
  if (!interrupt_requested() && target.record_rule) rule = judge_record_rule(target, seeds);
  fill_from_seeds(r, seeds, trained);
  return r;
}

// --resume: a kept baseline's seeds, as much of them as the convergence guard reads (status, reached, steps, seconds).
std::vector<bench::SeedRun> seeds_of(const nlohmann::json& doc) {
  std::vector<bench::SeedRun> seeds;
  if (!doc.contains("convergence") || doc["convergence"].is_null()) return seeds;
  for (const auto& s : doc["convergence"]["seeds"]) {
    bench::SeedRun r;
    r.status = s["status"].get<std::string>();
    r.reached = s["reached"].get<bool>();
    if (r.reached) {
      r.steps = s["steps"].get<int64_t>();
      r.tokens = s["tokens"].get<int64_t>();
      r.time_s = s["time_s"].get<double>();
    }
    seeds.push_back(std::move(r));
  }
  return seeds;
}

// A row's result as its process wrote it in this run (any status), or nullopt.
std::optional<nlohmann::json> written_result(const std::filesystem::path& path, const std::string& run_id) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    auto doc = nlohmann::json::parse(in);
    if (doc.value("run_id", "") == run_id) return doc;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// The host allocator a row wants its process to run under (nullopt: the C library's), if not this process's.
std::optional<std::optional<bench::HostAllocatorMode>> other_allocator(const bench::RunConfig& run,
                                                                       const bench::HostAllocator& here) {
  const auto wanted = run.host_allocator ? std::optional(run.host_allocator_mode) : std::nullopt;
  if (wanted == here.mode) return std::nullopt;
  return wanted;
}

// The command that runs row `index` alone in a child process: this executable, the same options, this run's id.
std::vector<std::string> child_command(const std::vector<std::string>& command_line, const std::string& run_id,
                                       size_t index) {
  std::vector<std::string> argv{bench::this_executable().string()};
  for (size_t i = 0; i < command_line.size(); ++i) {
    if (command_line[i] == "--run-id") {
      ++i;  // and its value
      continue;
    }
    if (!command_line[i].starts_with("--run-id=")) argv.push_back(command_line[i]);
  }
  argv.push_back("--run-id=" + run_id);
  argv.push_back("--row-in-child=" + std::to_string(index));
  return argv;
}

template <typename T>
std::optional<T> find(const std::map<std::string, T>& map, const std::string& key) {
  const auto it = map.find(key);
  return it == map.end() ? std::nullopt : std::optional<T>(it->second);
}

}  // namespace

SuiteOutcome execute_suite(const Suite& suite, const std::vector<PlannedConfig>& planned, const RunContext& context,
                           std::shared_ptr<const bench::Tokens> tokens, const ExecuteOptions& options,
                           std::shared_ptr<bench::Collectives> collectives) {
  SuiteOutcome outcome;
  const bool leader = !collectives || collectives->rank() == 0;
  ProgressLine line(options.progress && leader);
  std::map<std::string, Reference> baselines;                         // by implementation
  std::map<std::string, std::vector<bench::SeedRun>> baseline_seeds;  // --target-loss: the baseline's seeds
  auto record = [&](const PlannedConfig& p, const std::string& implementation, nlohmann::json doc) {
    if (!leader) return;
    const auto path = options.paths.of(p, implementation);
    bench::write_file_atomically(path, doc.dump(1) + "\n");
    outcome.files.push_back(path);
    outcome.documents.push_back(std::move(doc));
  };

  const auto here = bench::current_host_allocator();
  for (const auto& p : planned) {
    if (outcome.interrupted) break;
    const std::string title = "[" + suite.name + " " + std::to_string(p.index + 1) + "/" +
                              std::to_string(planned.size()) + "] " + p.row.label;
    const bool at_end = p.index == 0 || p.index + 1 == planned.size();
    std::vector<std::string> implementations;
    for (const auto& impl : options.implementations)
      if (impl == "libtorch" || !options.python_at_ends_only || at_end) implementations.push_back(impl);
    const bool is_baseline = p.index == 0 && suite.first_is_baseline;
    const bool selected = options.only_row
                              ? p.index == *options.only_row
                              : options.rows.empty() || std::ranges::find(options.rows, p.index) != options.rows.end();
    if (!selected) {
      // A child running one row, or a row --rows left out: the baseline as it was written, for the checks.
      for (const auto& impl : implementations)
        if (auto doc = is_baseline ? written_result(options.paths.of(p, impl), context.run_id) : std::nullopt;
            doc && doc->value("status", "") == "ok") {
          baselines[impl] = {all_losses(*doc), (*doc)["config"]["batch_size"].get<int64_t>()};
          if (p.run.target) baseline_seeds[impl] = seeds_of(*doc);
        }
      continue;
    }
    if (p.skip_reason) {
      for (const auto& impl : implementations) record(p, impl, result_document(context, suite, p, impl, nullptr, {}));
      ++outcome.skipped;
      if (leader) std::cout << title << ": skipped (" << *p.skip_reason << ")" << std::endl;
      continue;
    }
    if (const auto allocator = options.only_row ? std::nullopt : other_allocator(p.run, here)) {
      // An allocator is chosen when a process starts: this row runs in a child of the same command started under its
      // own (its Python rows inherit it), which writes the row's files; they are read back here.
      const std::string name = *allocator ? bench::to_string(**allocator) : "off";
      if (collectives) {
        auto skipped = p;
        skipped.skip_reason = "host allocator " + name +
                              ": a row in its own process cannot join the data-parallel ranks; start the ranks under "
                              "it instead";
        for (const auto& impl : implementations)
          record(p, impl, result_document(context, suite, skipped, impl, nullptr, {}));
        ++outcome.skipped;
        if (leader) std::cout << title << ": skipped (" << *skipped.skip_reason << ")" << std::endl;
        continue;
      }
      if (leader) std::cout << title << ": in its own process under host allocator " << name << std::endl;
      int code = -1;
      std::string why;
      try {
        code = bench::run_child_process(child_command(options.command_line, context.run_id, p.index),
                                        bench::host_allocator_environment(*allocator), std::nullopt,
                                        &interrupt_requested());
        why = "exited with status " + std::to_string(code);
      } catch (const std::exception& e) {
        why = std::string("could not start: ") + e.what();
      }
      if (interrupt_requested()) outcome.interrupted = true;
      for (const auto& impl : implementations) {
        const auto path = options.paths.of(p, impl);
        auto doc = written_result(path, context.run_id);
        if (!doc) {
          bench::RunResult r;
          r.implementation = impl;
          r.status = "failed";
          r.stop_reason = outcome.interrupted ? "interrupted" : "failed";
          r.reason = "the row's own process (host allocator " + name + ") " + why + " before writing its result";
          const auto judged = judge_losses(p, impl, {}, 0, is_baseline, find(baselines, impl), std::nullopt);
          doc = result_document(context, suite, p, impl, &r, judged.check, judged.vs_libtorch);
          record(p, impl, *doc);
        } else if (leader) {
          outcome.files.push_back(path);
          outcome.documents.push_back(*doc);
        }
        const std::string status = doc->value("status", "failed");
        ++(status == "ok" ? outcome.ok : status == "skipped" ? outcome.skipped : outcome.failed);
        if (status == "ok" && is_baseline) {
          baselines[impl] = {all_losses(*doc), (*doc)["config"]["batch_size"].get<int64_t>()};
          if (p.run.target) baseline_seeds[impl] = seeds_of(*doc);
        }
      }
      continue;
    }
    auto run = p.run;
    if (!is_baseline) break_for_test(run);
    std::optional<Reference> engine;  // the engine's row of this configuration, for the Python rows
    for (const auto& impl : implementations) {
      if (outcome.interrupted) break;
      const std::string row_title = title + (impl == "libtorch" ? "" : " [" + impl + "]");
      // --resume: an ok result measured under the same settings stays, and is the reference it would have been.
      if (auto kept = options.resume ? earlier_result(options.paths.of(p, impl), settings_hash(context, p, impl))
                                     : std::nullopt) {
        const Reference reference{all_losses(*kept), (*kept)["config"]["batch_size"].get<int64_t>()};
        if (is_baseline) baselines[impl] = reference;
        if (is_baseline && run.target) baseline_seeds[impl] = seeds_of(*kept);
        if (impl == "libtorch") engine = reference;
        ++outcome.ok;
        ++outcome.kept;
        if (leader) std::cout << row_title << ": kept (measured earlier under the same settings)" << std::endl;
        if (leader) outcome.files.push_back(options.paths.of(p, impl));
        outcome.documents.push_back(std::move(*kept));
        continue;
      }
      if (impl != "libtorch")
        if (const auto reason = bench::python_cannot_run(run)) {
          auto skipped = p;
          skipped.skip_reason = reason;
          record(p, impl, result_document(context, suite, skipped, impl, nullptr, {}));
          ++outcome.skipped;
          if (leader) std::cout << row_title << ": skipped (" << *reason << ")" << std::endl;
          continue;
        }
      std::vector<bench::SeedRun> seeds;
      bench::RunResult r;
      if (run.target) {
        std::optional<RecordRule> rule;
        r = train_row(row_title, p, run, impl, engine, tokens, options, leader, line, seeds, rule);
        r.convergence = judged_convergence(p, *run.target, seeds, find(baseline_seeds, impl), is_baseline, rule);
      } else {
        line.begin(row_title);
        r = run_row(suite, p, run, impl, engine, tokens, collectives, line);
        line.end();
      }

      const auto losses = all_losses(r);
      const auto judged = judge_losses(p, impl, losses, r.batch_size, is_baseline, find(baselines, impl), engine);
      if (is_baseline && r.status == "ok") baselines[impl] = {losses, r.batch_size};
      if (is_baseline && r.status == "ok" && run.target) baseline_seeds[impl] = seeds;
      auto doc = result_document(context, suite, p, impl, &r, judged.check, judged.vs_libtorch);
      if (r.status == "ok")
        ++outcome.ok;
      else
        ++outcome.failed;
      if (r.stop_reason == "interrupted") outcome.interrupted = true;
      if (leader) std::cout << row_title << ": " << one_line_summary(doc) << std::endl;
      record(p, impl, std::move(doc));
      if (impl == "libtorch" && r.status == "ok") engine = Reference{losses, r.batch_size};
    }
  }
  return outcome;
}

}  // namespace stepwise::ablations
