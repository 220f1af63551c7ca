// Turns a suite and the run's settings into concrete configurations: --disable'd flags taken out, flags applied in
// table order, flags that cannot apply on this device recorded as skipped (never dropped silently), whole steps
// skipped when nothing they change is left or can apply.
#pragma once

#include "ablations/flags.h"
#include "ablations/suite.h"
#include "bench/run_config.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stepwise::ablations {

// What every configuration of one invocation shares.
struct Settings {
  std::string preset;
  int64_t batch_size = 0, seq_len = 0;
  c10::Device device = c10::kCPU;
  uint64_t seed = 123;
  double lr = 5e-4;
  bench::TimingOptions timing;
  bench::DataOptions data;
  bench::AdamWKind adamw_baseline = bench::AdamWKind::Reference;  // the optimizer when fused_adamw is off
  FlagOptions flag_options;
  int64_t max_batch_limit = 0;
  size_t trace_steps = 0;
  std::vector<std::string> disabled;  // --disable: taken out of every step of the suite
};

struct PlannedConfig {
  size_t index = 0;
  SuiteStep step;
  std::vector<std::string> effective;                              // flags in effect
  std::vector<std::pair<std::string, std::string>> skipped_flags;  // (flag, reason)
  std::optional<std::string> skip_reason;                          // the whole configuration is skipped
  bench::RunConfig run;
};

// The RunConfig for a set of flags (assumed applicable); the baseline when `flags` is empty.
bench::RunConfig make_run_config(const Settings& settings, const std::vector<std::string>& flags);

std::vector<PlannedConfig> plan_suite(const Suite& suite, const Settings& settings);

// "03_fused_adamw" style file stem for a step.
std::string file_stem(size_t index, const std::string& label);

}  // namespace stepwise::ablations
