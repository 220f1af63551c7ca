// The time-to-target table from the result documents' convergence sections.
#include "ablations/tables/target_table.h"

#include "ablations/tables/results_table.h"
#include "ablations/tables/text_table.h"
#include "ablations/tables/verdict_table.h"

namespace stepwise::ablations {

namespace {

using Align = TextTable::Align;

// "275 [240-310]": a seed summary's median with its interval (the order-statistic one from six seeds, else the
// range of the seeds), as steps or seconds.
std::string median_cell(const nlohmann::json& summary, int decimals) {
  if (summary.is_null()) return "-";
  const auto value = [&](const nlohmann::json& v) {
    return decimals == 0 ? with_commas(v.get<double>()) : fixed(v.get<double>(), decimals);
  };
  std::string cell = value(summary["median"]);
  if (!summary["median_low"].is_null())
    cell += " [" + value(summary["median_low"]) + "-" + value(summary["median_high"]) + "]";
  return cell;
}

}  // namespace

std::string convergence_table(const std::vector<nlohmann::json>& documents) {
  TextTable t({{"#", Align::Right},
               {"step"},
               {"reached", Align::Right},
               {"steps to target", Align::Right},
               {"tokens", Align::Right},
               {"seconds", Align::Right},
               {"olympic s", Align::Right},
               {"x base time", Align::Right},
               {"x base steps", Align::Right},
               {"convergence"}});
  bool any = false;
  for (const auto& doc : documents) {
    if (!doc.contains("convergence") || doc["convergence"].is_null()) continue;
    any = true;
    const auto& c = doc["convergence"];
    const auto& g = c["guard"];
    // A Python row sits under its configuration's, judged against the Python baseline's seeds.
    const auto head = row_head(doc);
    const auto ratio = [](const nlohmann::json& v) {
      return v.is_null() ? std::string("-") : "x" + fixed(v.get<double>(), 2);
    };
    t.add_row(
        {head.index_cell(), head.label,
         std::to_string(c["reached"].get<int>()) + "/" + std::to_string(c["runs"].get<int>()),
         median_cell(c["steps"], 0), median_cell(c["tokens"], 0), median_cell(c["time_s"], 1),
         c["time_s"].is_null() ? "-" : fixed(c["time_s"]["olympic_mean"].get<double>(), 1), ratio(g["time_ratio"]),
         ratio(g["steps_ratio"]),
         g["status"].get<std::string>() +
             (g["p"].is_null() || g["status"] == "baseline" ? "" : " (p " + fixed(g["p"].get<double>(), 3) + ")")});
  }
  if (!any) return "";
  const auto verdicts = verdict_table(documents);
  return t.str() +
         "\nseconds: timed training only (evaluation, warm-up and compile apart); medians over the seeds that reached "
         "the target, [95% interval] from six seeds on; olympic: the mean without the fastest and slowest seed\n" +
         (verdicts.empty() ? "" : "\n" + verdicts);
}

}  // namespace stepwise::ablations
