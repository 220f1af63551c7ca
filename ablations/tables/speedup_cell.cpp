// The speedup cell from two result documents' raw step times.
#include "ablations/tables/speedup_cell.h"

#include "ablations/tables/text_table.h"
#include "bench/stats.h"

#include <vector>

namespace stepwise::ablations {

namespace {

std::vector<double> step_times(const nlohmann::json& doc) {
  std::vector<double> ms;
  for (const auto& s : doc["steps"]) ms.push_back(s["ms"].get<double>());
  return ms;
}

}  // namespace

std::string speedup_cell(const nlohmann::json& doc, const nlohmann::json& reference, bool& unresolved) {
  const double ratio =
      doc["summary"]["tokens_per_s"].get<double>() / reference["summary"]["tokens_per_s"].get<double>();
  // tok/s = tokens per step / median time: the interval of the time ratio, times the tokens-per-step ratio.
  const double tokens =
      doc["summary"]["tokens_per_step"].get<double>() / reference["summary"]["tokens_per_step"].get<double>();
  const auto interval = bench::median_ratio_interval(step_times(reference), step_times(doc));
  if (!interval) return fixed(ratio, 2) + " (n<2)";
  const bench::Interval scaled{interval->low * tokens, interval->high * tokens};
  const bool flat = scaled.contains(1.0);
  unresolved = unresolved || flat;
  return fixed(ratio, 2) + " [" + fixed(scaled.low, 2) + "-" + fixed(scaled.high, 2) + "]" + (flat ? " n.s." : "");
}

}  // namespace stepwise::ablations
