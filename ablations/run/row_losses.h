// A row's losses judged: against its suite's baseline by the math class of the flags in effect, and a Python row
// against the engine's row of the same configuration, which saw the same weights and batches.
#pragma once

#include "ablations/judges/loss_check.h"
#include "ablations/run/plan.h"
#include "bench/measure/runner.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stepwise::ablations {

// Every recorded loss, warm-up first: all the steps two runs of the same batches share (a result document's too).
std::vector<double> all_losses(const bench::RunResult& result);
std::vector<double> all_losses(const nlohmann::json& document);

// A row's losses with the batch they were measured at: a suite's baseline per implementation, and the engine's row
// of each configuration for its Python rows.
struct Reference {
  std::vector<double> losses;
  int64_t batch = 0;
};

struct Judgement {
  LossCheck check;                       // against the suite's baseline (the baseline's own, for the baseline)
  std::optional<LossCheck> vs_libtorch;  // a Python row against the engine's row
};

// `batch`: the batch the row was measured at; `baseline` and `engine` are absent when not (yet) measured.
Judgement judge_losses(const PlannedConfig& planned, const std::string& implementation,
                       const std::vector<double>& losses, int64_t batch, bool is_baseline,
                       const std::optional<Reference>& baseline, const std::optional<Reference>& engine);

}  // namespace stepwise::ablations
