// What a run shows while it runs: one line per configuration rewritten in place, and the time-to-target lines.
#pragma once

#include "bench/measure/convergence.h"
#include "bench/measure/runner.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>

namespace stepwise::ablations {

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

// The line a row prints as it ends: "1,518 tok/s, 168.6 ms/step (n=50, noise 1.7%), loss 10.94 -> 9.13 [ok]", or its
// status and reason; every table comes at the end of the run, from ./report show (ablations/run/report_tables.h).
std::string one_line_summary(const nlohmann::json& document);

}  // namespace stepwise::ablations
