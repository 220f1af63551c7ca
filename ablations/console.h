// What ./ablate prints: the listings, --describe, the startup table, the progress line and the results table.
#pragma once

#include "ablations/plan.h"
#include "ablations/suite.h"
#include "bench/measure/convergence.h"
#include "bench/measure/runner.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace stepwise::ablations {

// verbose: also the files that hold each flag's effect.
std::string list_flags(bool json, bool verbose = false);
std::string list_presets(bool json);
std::string list_suites();
// `model`: the preset's with any --n-layer, --n-head, --n-embd, --context-length, --vocab-size laid over it.
// `cuda`: estimate activation memory as on a GPU (a CPU keeps dropout's noise in floats and runs SDPA's math form).
std::string describe_preset(const std::string& preset, const model::GPTConfig& model, int64_t seq_len, bool json,
                            bool cuda = false);

// "n_layer 4, vocab_size 65": the dimensions of `model` that differ from the preset's; empty when none do.
std::string dimension_overrides(const model::GPTConfig& preset, const model::GPTConfig& model);

// The startup table's data line: what was read, its size, its validation stream and its vocabulary.
std::string data_summary(const bench::DataOptions& data);

// llm.c-style table of the resolved configuration, printed before anything runs.
std::string startup_table(const Suite& suite, const bench::RunConfig& base, const std::vector<PlannedConfig>& planned,
                          const nlohmann::json& env, const std::string& out_dir);

// One line per step while running; rewritten in place when stdout is a terminal. Under ./run_all.sh's plan
// ($STEPWISE_PLAN_END, the Unix time the plan ends at) it also shows the planned minutes left.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled);
  void begin(const std::string& title);
  void update(const bench::Progress& p);
  void update_text(const std::string& text);  // the title, then `text`
  void end();

 private:
  std::string with_time_left(std::string line) const;

  bool enabled_;
  std::optional<double> plan_end_;  // Unix seconds
  std::string title_;
  size_t last_width_ = 0;
};

// Training to a target: "step 150  val 5.31 -> 5.00  12.3 s  ~8 s to go" (the estimate extrapolates the last two
// evaluations); and the line a finished seed prints: "reached 5.00 at step 275 (70,400 tokens) in 21.7 s".
std::string convergence_progress(const bench::SeedRun& run, double target);
std::string seed_line(const bench::SeedRun& run, double target);

// "1,518 tok/s, 168.6 ms/step (n=50, noise 1.7%), loss 10.94 -> 9.13 [ok]", or the status and reason.
std::string one_line_summary(const nlohmann::json& document);

// The step-by-step table from the result documents of one suite, in order: step, flag added, tok/s,
// x previous (vs the last step that ran), x baseline, ms/step median (p10-p90), peak memory, MFU, loss check.
std::string results_table(const std::vector<nlohmann::json>& documents);

// Time to a target loss, one row per configuration trained to it: seeds that reached it, steps, tokens and timed
// seconds to it (median [interval]), the olympic mean, x baseline in time and in steps, the convergence guard's
// verdict. Empty when no document trained to a target.
std::string convergence_table(const std::vector<nlohmann::json>& documents);

// A sweep's summary (ablations/sweep.h): one row per configuration of the suite, one column per point (`points`, the
// points' labels; `documents`, each point's result documents), each cell the configuration's speedup over that point's
// baseline with its 95% interval, or why it has none. Stepwise's engine rows only.
std::string sweep_table(const std::vector<std::string>& points,
                        const std::vector<std::vector<nlohmann::json>>& documents);

}  // namespace stepwise::ablations
