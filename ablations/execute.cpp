// execute_suite: each planned configuration run (or skipped) by each implementation, loss-checked against the suite's
// baseline, recorded in its result document and written at once, so nothing measured is lost when a later one fails
// or is interrupted.
#include "ablations/execute.h"

#include "ablations/console.h"
#include "ablations/interrupt.h"
#include "bench/atomic_file.h"
#include "bench/python/python_step.h"
#include "bench/measure/runner.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

namespace stepwise::ablations {

namespace {

// Tests only (tests/e2e/test_distributed.py): STEPWISE_TEST_FAIL_RANK=R fails rank R's configurations at their second
// measured step while the other ranks run on, the case a data-parallel run must end cleanly instead of hanging.
std::optional<size_t> injected_failure(const std::shared_ptr<bench::Collectives>& collectives) {
  const char* rank = std::getenv("STEPWISE_TEST_FAIL_RANK");
  if (!rank || !collectives || std::to_string(collectives->rank()) != rank) return std::nullopt;
  return 1;
}

// Tests only (tests/e2e/test_loss_check.py): STEPWISE_TEST_BREAK=lr0 or half_lr breaks every configuration but the
// suite's baseline — a learning rate of ~0, or half of it — so the loss check must call them "math changed".
void break_for_test(bench::RunConfig& run) {
  const char* mode = std::getenv("STEPWISE_TEST_BREAK");
  if (!mode) return;
  if (std::string(mode) == "lr0") run.adamw.lr(1e-12);
  if (std::string(mode) == "half_lr") run.adamw.lr(run.adamw.lr() / 2);
}

// Every recorded loss, warm-up first: all the steps two runs of the same batches share.
std::vector<double> all_losses(const bench::RunResult& r) {
  std::vector<double> out;
  for (const auto* phase : {&r.warmup, &r.steps})
    for (const auto& s : *phase) out.push_back(s.loss);
  return out;
}

// A suite baseline's losses per implementation, with the batch they were measured at.
struct Reference {
  std::vector<double> losses;
  int64_t batch = 0;
};

std::string file_name(const PlannedConfig& p, const std::string& implementation) {
  return file_stem(p.index, p.step.label) + (implementation == "libtorch" ? "" : "." + implementation) + ".json";
}

std::vector<double> all_losses(const nlohmann::json& doc) {
  std::vector<double> out;
  for (const char* phase : {"warmup", "steps"})
    for (const auto& s : doc[phase]) out.push_back(s["loss"].is_null() ? NAN : s["loss"].get<double>());
  return out;
}

// The result --resume may keep: in the suite's folder, ok, and measured under exactly these settings.
std::optional<nlohmann::json> earlier_result(const ExecuteOptions& options, const PlannedConfig& p,
                                             const std::string& implementation, const std::string& hash) {
  std::ifstream in(options.suite_dir / file_name(p, implementation));
  if (!in) return std::nullopt;
  try {
    auto doc = nlohmann::json::parse(in);
    if (doc.value("status", "") == "ok" && doc["config"].value("settings_hash", "") == hash) return doc;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace

SuiteOutcome execute_suite(const Suite& suite, const std::vector<PlannedConfig>& planned, const RunContext& context,
                           std::shared_ptr<const bench::Tokens> tokens, const ExecuteOptions& options,
                           std::shared_ptr<bench::Collectives> collectives) {
  SuiteOutcome outcome;
  const bool leader = !collectives || collectives->rank() == 0;
  ProgressLine line(options.progress && leader);
  std::map<std::string, Reference> baselines;  // by implementation
  auto record = [&](const PlannedConfig& p, const std::string& implementation, nlohmann::json doc) {
    if (!leader) return;
    const auto path = options.single_file && implementation == "libtorch" ? *options.single_file
                      : options.single_file ? options.single_file->parent_path() / file_name(p, implementation)
                                            : options.suite_dir / file_name(p, implementation);
    bench::write_file_atomically(path, doc.dump(1) + "\n");
    outcome.files.push_back(path);
    outcome.documents.push_back(std::move(doc));
  };

  for (const auto& p : planned) {
    if (outcome.interrupted) break;
    const std::string title = "[" + suite.name + " " + std::to_string(p.index + 1) + "/" +
                              std::to_string(planned.size()) + "] " + p.step.label;
    const bool at_end = p.index == 0 || p.index + 1 == planned.size();
    std::vector<std::string> implementations;
    for (const auto& impl : options.implementations)
      if (impl == "libtorch" || !options.python_at_ends_only || at_end) implementations.push_back(impl);
    if (p.skip_reason) {
      for (const auto& impl : implementations) record(p, impl, result_document(context, suite, p, impl, nullptr, {}));
      ++outcome.skipped;
      if (leader) std::cout << title << ": skipped (" << *p.skip_reason << ")" << std::endl;
      continue;
    }
    const bool is_baseline = p.index == 0 && suite.first_is_baseline;
    auto run = p.run;
    if (!is_baseline) break_for_test(run);
    std::optional<Reference> engine;  // the engine's row of this configuration, for the Python rows
    for (const auto& impl : implementations) {
      if (outcome.interrupted) break;
      const std::string row_title = title + (impl == "libtorch" ? "" : " [" + impl + "]");
      // --resume: an ok result measured under the same settings stays, and is the reference it would have been.
      if (auto kept = options.resume ? earlier_result(options, p, impl, settings_hash(context, p, impl)) : std::nullopt) {
        const auto losses = all_losses(*kept);
        const int64_t batch = (*kept)["config"]["batch_size"].get<int64_t>();
        if (is_baseline) baselines[impl] = {losses, batch};
        if (impl == "libtorch") engine = Reference{losses, batch};
        ++outcome.ok;
        ++outcome.kept;
        if (leader) std::cout << row_title << ": kept (measured earlier under the same settings)" << std::endl;
        outcome.documents.push_back(std::move(*kept));
        continue;
      }
      line.begin(row_title);
      bench::RunResult r;
      if (impl == "libtorch") {
        bench::RunHooks hooks{[&](const bench::Progress& pr) { line.update(pr); }, &interrupt_requested(),
                              collectives, injected_failure(collectives)};
        r = bench::run_configuration(run, tokens, hooks);
        if (collectives &&
            collectives->any_failed(suite.name + "/" + std::to_string(p.index), r.status == "failed") &&
            r.status == "ok") {
          r.status = "failed";
          r.reason = "failed on another rank";
        }
      } else {
        auto python_run = run;
        if (engine) python_run.batch_size = engine->batch;  // max_batch: the batch the engine's probe chose
        python_run.max_batch = false;
        r = bench::run_python_configuration(python_run, tokens, impl, &interrupt_requested());
      }
      line.end();

      const auto losses = all_losses(r);
      const auto rounding = p.run.bf16 && p.run.bf16_mode == bench::Bf16Mode::Pure ? LossRounding::Bf16
                                                                                  : LossRounding::Fp32;
      const auto found = baselines.find(impl);
      LossCheck check = is_baseline ? baseline_loss(losses)
                        : found == baselines.end()
                            ? check_loss(losses, std::nullopt, MathClass::Exact, false)
                            : check_loss(losses, std::span<const double>(found->second.losses), math_class(p.effective),
                                         found->second.batch == r.batch_size, rounding);
      if (is_baseline && r.status == "ok") baselines[impl] = {losses, r.batch_size};
      std::optional<LossCheck> vs_libtorch;
      if (impl != "libtorch" && engine) {
        // The same configuration, weights and batches: eager runs the same ATen ops in the same order (and draws the
        // same dropout masks); torch.compile fuses kernels and draws its own masks.
        const bool compiled = impl != "python-eager";
        const auto math = !compiled ? MathClass::Exact : p.run.bf16 ? MathClass::Bf16 : MathClass::Fp32;
        vs_libtorch =
            check_loss(losses, std::span<const double>(engine->losses), math, engine->batch == r.batch_size, rounding);
      }
      auto doc = result_document(context, suite, p, impl, &r, check, vs_libtorch);
      if (r.status == "ok") ++outcome.ok;
      else ++outcome.failed;
      if (r.stop_reason == "interrupted") outcome.interrupted = true;
      if (leader) std::cout << row_title << ": " << one_line_summary(doc) << std::endl;
      record(p, impl, std::move(doc));
      if (impl == "libtorch" && r.status == "ok") engine = Reference{losses, r.batch_size};
    }
  }
  return outcome;
}

}  // namespace stepwise::ablations
