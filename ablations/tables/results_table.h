// What a run prints as each configuration ends and at its end: the one-line summary and the step-by-step table
// (tok/s, x previous and x baseline with their intervals, ms/step, memory, MFU, the loss check).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace stepwise::ablations {

// The first two cells every end-of-run table gives a result: the suite index and step label for the engine's row; a
// Python row sits under its configuration's, indented, with no index.
struct RowHead {
  bool engine = true;  // stepwise's own row (implementation libtorch)
  int index = 0;       // the suite index, 0 for a lone configuration
  std::string label;
  std::string index_cell() const { return engine ? std::to_string(index) : ""; }
};
RowHead row_head(const nlohmann::json& document);

// "1,518 tok/s, 168.6 ms/step (n=50, noise 1.7%), loss 10.94 -> 9.13 [ok]", or the status and reason.
std::string one_line_summary(const nlohmann::json& document);

// The step-by-step table from the result documents of one suite, in order: step, flag added, tok/s,
// x previous (vs the last step that ran), x baseline, ms/step median (p10-p90), peak memory, MFU, loss check.
std::string results_table(const std::vector<nlohmann::json>& documents);

}  // namespace stepwise::ablations
