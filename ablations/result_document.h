// The result document of one configuration (results/schema.json, documented in results/README.md), built in this one
// place from the planned configuration, what the engine measured, and the loss check against the suite's baseline.
#pragma once

#include "ablations/loss_check.h"
#include "ablations/plan.h"
#include "ablations/suite.h"
#include "bench/runner.h"

#include <nlohmann/json.hpp>

#include <string>

namespace stepwise::ablations {

constexpr int kSchemaVersion = 1;

// What every document of one invocation shares.
struct RunContext {
  std::string run_id;
  nlohmann::json env;
};

// `result` is null for a configuration that was skipped before running.
nlohmann::json result_document(const RunContext& context, const Suite& suite, const PlannedConfig& planned,
                               const bench::RunResult* result, const LossCheck& check);

// The flag table as JSON, embedded in every result so reports describe flags from the one declaration.
nlohmann::json flags_info();

}  // namespace stepwise::ablations
