// The phases' summary as a result records it: medians, shares of the step and the raw samples.
#include "bench/phases.h"

#include "bench/stats.h"

#include <cmath>
#include <limits>

namespace stepwise::bench {

std::string to_string(Phase p) { return kPhaseNames.to_string(p); }

PhaseTimes no_phase_times() {
  PhaseTimes t;
  t.fill(std::numeric_limits<double>::quiet_NaN());
  return t;
}

nlohmann::json phases_json(const std::vector<PhaseTimes>& steps, std::optional<double> step_median_ms,
                           const std::string& clock, const std::optional<std::string>& note) {
  auto phases = nlohmann::json::array();
  std::vector<double> sums(steps.size(), 0.0);
  for (size_t p = 0; p < kPhaseCount; ++p) {
    bool marked = false;
    for (const auto& s : steps) marked = marked || !std::isnan(s[p]);
    if (!marked) continue;
    // A step that skipped a phase the others marked spent no time in it.
    std::vector<double> ms;
    for (size_t i = 0; i < steps.size(); ++i) {
      ms.push_back(std::isnan(steps[i][p]) ? 0.0 : steps[i][p]);
      sums[i] += ms.back();
    }
    const double median = summarize(ms).median;
    phases.push_back(
        {{"name", to_string(static_cast<Phase>(p))},
         {"median_ms", median},
         {"share", step_median_ms && *step_median_ms > 0 ? nlohmann::json(median / *step_median_ms) : nlohmann::json()},
         {"ms", ms}});
  }
  if (phases.empty()) return nullptr;
  return {{"clock", clock},
          {"phases", phases},
          {"sum_median_ms", summarize(sums).median},
          {"step_median_ms", step_median_ms ? nlohmann::json(*step_median_ms) : nlohmann::json()},
          {"note", note ? nlohmann::json(*note) : nlohmann::json()}};
}

}  // namespace stepwise::bench
