// budget_table: one line per row of the search, then each row's probes' pattern where it is not monotone, and the
// legend.
#include "ablations/tables/budget_table.h"

#include "ablations/tables/text_table.h"

#include <sstream>

namespace stepwise::ablations {

namespace {

using Align = TextTable::Align;

// A target or a level as given: 2.8, 0.01.
std::string general(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string number(const nlohmann::json& v, int decimals) {
  return v.is_null() ? std::string("-") : fixed(v.get<double>(), decimals);
}

// "(90, 135]", or "(0, 40]: below the grid".
std::string bracket_cell(const nlohmann::json& row) {
  if (row["budget"].is_null()) return "-";
  const auto n = std::to_string(row["budget"].get<int64_t>());
  if (row["below"].is_null()) return "(0, " + n + "] below the grid";
  return "(" + std::to_string(row["below"].get<int64_t>()) + ", " + n + "]";
}

// "x0.44 (0.30-0.67]": a ratio known to lie in (low, high]; "inf" where nothing bounds it above.
std::string ratio_cell(const nlohmann::json& v) {
  if (v.is_null() || v["ratio"].is_null()) return "-";
  return "x" + number(v["ratio"], 2) + " (" + number(v["low"], 2) + "-" +
         (v["high"].is_null() ? std::string("inf") : number(v["high"], 2)) + "]";
}

// "2.4 (1.6-2.4]": the seconds at N, and at the bracket's low end.
std::string seconds_cell(const nlohmann::json& v) {
  if (v.is_null() || v["median"].is_null()) return "-";
  return number(v["median"], 1) + " (" + number(v["low"], 1) + "-" + number(v["high"], 1) + "]";
}

std::string cost_cell(const nlohmann::json& row) {
  if (!row["skipped"].is_null()) return "-";
  return fixed(row["search_s"].get<double>(), 0) + " s, " + with_commas(row["steps_per_seed"].get<double>()) +
         " steps a seed, " + (row["branched"].get<bool>() ? "branched" : "from scratch");
}

}  // namespace

std::string budget_table(const nlohmann::json& search) {
  TextTable t({{"#", Align::Right},
               {"row"},
               {"N", Align::Right},
               {"N in", Align::Right},
               {"x base N", Align::Right},
               {"seconds at N", Align::Right},
               {"x base s", Align::Right},
               {"search"}});
  std::string notes;
  for (const auto& row : search["rows"]) {
    const auto index = std::to_string(row["index"].get<int>());
    const auto label = row["label"].get<std::string>();
    if (!row["skipped"].is_null()) {
      t.add_note_row({index, label}, "skipped: " + row["skipped"].get<std::string>());
      continue;
    }
    t.add_row({index, label, row["budget"].is_null() ? "none" : std::to_string(row["budget"].get<int64_t>()),
               bracket_cell(row), ratio_cell(row["n_ratio"]), seconds_cell(row["seconds_at_n"]),
               ratio_cell(row["seconds_ratio"]), cost_cell(row)});
    if (!row["monotone"].get<bool>() || row["budget"].is_null())
      notes += "  " + index + " " + label + ": " + row["summary"].get<std::string>() + "\n";
    if (!row["from_scratch"].is_null())
      notes += "  " + index + " from scratch: " + row["from_scratch"].get<std::string>() + "\n";
  }
  std::string grid;
  for (const auto& n : search["grid"]) grid += (grid.empty() ? "" : ", ") + std::to_string(n.get<int64_t>());
  return "grid: " + grid + " (" + search["grid_from"].get<std::string>() + ")\n" + t.str() + notes +
         "\nN: the smallest grid budget at which the row's record rule holds (the seeds' mean validation loss at N "
         "below " +
         general(search["target_loss"].get<double>()) + ", one-sided t-test at p < " +
         general(search["record_p"].get<double>()) +
         ") and at every budget probed above it;\nN in: N lies above the budget below it, where the rule failed or "
         "was not judged (every probe's verdict: budget.json, ./report);\nx base: over the baseline's, each side "
         "within its bracket; seconds at N: the seeds' median timed seconds of N steps, and at the bracket's end\n"
         "search: " +
         fixed(search["search_s"].get<double>(), 0) + " s in all\n";
}

}  // namespace stepwise::ablations
