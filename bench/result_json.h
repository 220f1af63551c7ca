// The engine's part of a result document (results/schema.json): config, summary, steps, warm-up, probe.
#pragma once

#include "bench/loss_check.h"
#include "bench/run_config.h"
#include "bench/runner.h"

#include <nlohmann/json.hpp>

namespace stepwise::bench {

// Keys of `config` the engine knows (the flag layer adds flags, flags_requested, flags_skipped); `result` is null for
// a configuration that never ran.
nlohmann::json config_json(const RunConfig& config, const RunResult* result);
// `summary`, or null when nothing was measured.
nlohmann::json summary_json(const RunConfig& config, const RunResult& result, const LossCheck& check);
nlohmann::json steps_json(const std::vector<StepRecord>& steps);
nlohmann::json probe_json(const std::optional<MaxBatchProbe>& probe);

}  // namespace stepwise::bench
