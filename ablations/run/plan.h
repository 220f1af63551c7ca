// Turns a suite and the base RunConfig into concrete configurations: --disable'd flags taken out, flags applied in
// table order, flags that cannot apply here recorded as skipped (never dropped silently), whole steps skipped when
// nothing they change is left or can apply.
#pragma once

#include "ablations/flag_table/flags.h"
#include "ablations/run/suite.h"
#include "bench/run_config.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stepwise::ablations {

struct PlannedConfig {
  size_t index = 0;
  SuiteRow row;
  std::vector<std::string> effective;                              // flags in effect
  std::vector<std::pair<std::string, std::string>> skipped_flags;  // (flag, reason)
  std::optional<std::string> skip_reason;                          // the whole configuration is skipped
  bench::RunConfig run;
};

// `base` with a set of flags switched on (assumed applicable); the baseline when `flags` is empty.
bench::RunConfig with_flags(const bench::RunConfig& base, const std::vector<std::string>& flags);

// `disabled`: --disable, taken out of every row of the suite.
std::vector<PlannedConfig> plan_suite(const Suite& suite, const bench::RunConfig& base,
                                      const std::vector<std::string>& disabled = {});

// --dry-run --json: each configuration as planned — its flags in effect and skipped, whether it is skipped and why,
// its batch and precision, the horizon its seeds train to (step_budget), and the implementations that would run it —
// with the preset, the device and the timing of `base`, so a caller (./run_all.sh's plan) can cost a run before it
// starts.
nlohmann::json plan_json(const Suite& suite, const std::vector<PlannedConfig>& planned, const bench::RunConfig& base,
                         const std::vector<std::string>& implementations, bool implementations_at_ends);

// "03_fused_adamw" style file stem for a step.
std::string file_stem(size_t index, const std::string& label);

}  // namespace stepwise::ablations
