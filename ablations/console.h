// What ./ablate prints: the listings, --describe, the startup table, the progress line and the results table.
#pragma once

#include "ablations/plan.h"
#include "ablations/suite.h"
#include "bench/measure/runner.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace stepwise::ablations {

// verbose: also the files that hold each flag's effect.
std::string list_flags(bool json, bool verbose = false);
std::string list_presets(bool json);
std::string list_suites();
// `model`: the preset's with any --n-layer, --n-head, --n-embd, --context-length, --vocab-size laid over it.
std::string describe_preset(const std::string& preset, const model::GPTConfig& model, int64_t seq_len, bool json);

// "n_layer 4, vocab_size 65": the dimensions of `model` that differ from the preset's; empty when none do.
std::string dimension_overrides(const model::GPTConfig& preset, const model::GPTConfig& model);

// The startup table's data line: what was read, its size, its validation stream and its vocabulary.
std::string data_summary(const bench::DataOptions& data);

// llm.c-style table of the resolved configuration, printed before anything runs.
std::string startup_table(const Suite& suite, const bench::RunConfig& base, const std::vector<PlannedConfig>& planned,
                          const nlohmann::json& env, const std::string& out_dir);

// One line per step while running; rewritten in place when stdout is a terminal.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled);
  void begin(const std::string& title);
  void update(const bench::Progress& p);
  void end();

 private:
  bool enabled_;
  std::string title_;
  size_t last_width_ = 0;
};

// "1,518 tok/s, 168.6 ms/step (n=50, noise 1.7%), loss 10.94 -> 9.13 [ok]", or the status and reason.
std::string one_line_summary(const nlohmann::json& document);

// The step-by-step table from the result documents of one suite, in order: step, flag added, tok/s,
// x previous (vs the last step that ran), x baseline, ms/step median (p10-p90), peak memory, MFU, loss check.
std::string results_table(const std::vector<nlohmann::json>& documents);

}  // namespace stepwise::ablations
