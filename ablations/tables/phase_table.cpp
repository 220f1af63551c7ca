// The phase table from the result documents' `phases` sections.
#include "ablations/tables/phase_table.h"

#include "ablations/tables/results_table.h"
#include "ablations/tables/text_table.h"

#include <map>

namespace stepwise::ablations {

namespace {

// The phases in the order a step runs them (bench/phases.h's kPhaseNames), as the table's columns.
const std::vector<std::string>& phase_order() {
  static const std::vector<std::string> order{"batch", "forward", "backward", "forward_backward", "comm", "optimizer"};
  return order;
}

const nlohmann::json* split_of(const nlohmann::json& doc) {
  const auto it = doc.find("phases");
  if (it == doc.end() || !it->is_object() || doc["status"] != "ok") return nullptr;
  return &*it;
}

}  // namespace

std::string phase_table(const std::vector<nlohmann::json>& documents) {
  std::vector<std::string> present;
  for (const auto& name : phase_order())
    for (const auto& doc : documents)
      if (const auto* split = split_of(doc)) {
        bool found = false;
        for (const auto& p : (*split)["phases"]) found = found || p["name"] == name;
        if (found) {
          present.push_back(name);
          break;
        }
      }
  if (present.empty()) return "";
  std::vector<TextTable::Column> columns{{"#", TextTable::Align::Right}, {"step"}};
  for (const auto& name : present)
    columns.push_back({name == "forward_backward" ? "fwd+bwd" : name, TextTable::Align::Right});
  columns.push_back({"ms/step", TextTable::Align::Right});
  TextTable t(std::move(columns));
  bool merged = false;
  for (const auto& doc : documents) {
    const auto* split = split_of(doc);
    if (!split) continue;
    const auto head = row_head(doc);
    const std::string index = doc["suite"].is_null() ? "" : head.index_cell();
    const std::string& label = head.label;
    std::map<std::string, const nlohmann::json*> by_name;
    for (const auto& p : (*split)["phases"]) by_name[p["name"].get<std::string>()] = &p;
    std::vector<std::string> cells{index, label};
    for (const auto& name : present) {
      const auto it = by_name.find(name);
      if (it == by_name.end()) {
        cells.push_back("-");
        continue;
      }
      const auto& share = (*it->second)["share"];
      cells.push_back(fixed((*it->second)["median_ms"].get<double>(), 2) +
                      (share.is_number() ? " (" + percent(share.get<double>(), 0) + ")" : ""));
    }
    const auto& step = (*split)["step_median_ms"];
    cells.push_back(step.is_number() ? fixed(step.get<double>(), 2) : "-");
    merged = merged || by_name.count("forward_backward");
    t.add_row(std::move(cells));
  }
  std::string notes =
      "where the step goes: each phase's median ms (its share of the median step); medians do not add up to the "
      "step's\n";
  if (merged) notes += "fwd+bwd: compile replays forward and backward as one CUDA graph, marked as one phase\n";
  return t.str() + "\n" + notes;
}

}  // namespace stepwise::ablations
