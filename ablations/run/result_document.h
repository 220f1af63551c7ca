// The result document of one configuration (results/schema.json, documented in results/README.md), built in this one
// place from the planned configuration, what the engine measured, and the loss check against the suite's baseline.
#pragma once

#include "ablations/judges/convergence_guard.h"
#include "ablations/judges/loss_check.h"
#include "ablations/judges/record_rule.h"
#include "ablations/judges/target_verdict.h"
#include "ablations/run/plan.h"
#include "ablations/run/suite.h"
#include "bench/measure/runner.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace stepwise::ablations {

// 2: summary.loss.check became the drop-and-end verdict (ablations/judges/loss_check.h); its window keys are gone.
constexpr int kSchemaVersion = 2;

// What every document of one invocation shares.
struct RunContext {
  std::string run_id;
  nlohmann::json env;
  nlohmann::json sweep;  // a sweep's point (ablations/run/sweep.h: sweep_json), or null
};

// The configuration section, written once: a result's `config` (with its settings_hash added) and the Python rows'
// request (bench/python/python_step.h: the `config` of request.json, validated there against results/schema.json).
// The configuration as planned, its flags, every flag option from its declaration (null while the flag is off), and
// what the engine reports of how it ran (`result`; null before it ran, or for a request).
nlohmann::json config_json(const PlannedConfig& planned, const bench::RunResult* result = nullptr);

// `result` is null for a configuration that was skipped before running. `implementation`: "libtorch" or the python-*
// that ran it; `vs_libtorch`, for a Python row, its losses against the engine's row of the same configuration.
nlohmann::json result_document(const RunContext& context, const Suite& suite, const PlannedConfig& planned,
                               const std::string& implementation, const bench::RunResult* result,
                               const LossCheck& check, const std::optional<LossCheck>& vs_libtorch = std::nullopt);

// The `convergence` section of a row trained to a target loss: every seed with its validation curve, the steps,
// tokens and seconds to the target summarised across the seeds that reached it, the guard's verdict, the time and
// steps against the baseline's (`verdict`, none for the baseline) and the speedrun's record rule.
nlohmann::json convergence_json(const bench::TargetOptions& target, const std::vector<bench::SeedRun>& seeds,
                                const ConvergenceVerdict& guard,
                                const std::optional<TargetVerdict>& verdict = std::nullopt,
                                const std::optional<RecordRule>& rule = std::nullopt);

// What defines a measurement, hashed: the resolved configuration (flags, preset, batch, timing, device, ...), the
// implementation, the device's name, the build (git commit) and torch's version. --resume keeps an earlier result only
// when its hash is this one.
std::string settings_hash(const RunContext& context, const PlannedConfig& planned, const std::string& implementation);

// The flag table as JSON, embedded in every result so reports describe flags from the one declaration.
nlohmann::json flags_info();

}  // namespace stepwise::ablations
