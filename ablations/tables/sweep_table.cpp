// The sweep table from each point's result documents.
#include "ablations/tables/sweep_table.h"

#include "ablations/tables/speedup_cell.h"
#include "ablations/tables/text_table.h"

#include <map>

namespace stepwise::ablations {

namespace {

using Align = TextTable::Align;

}  // namespace

std::string sweep_table(const std::vector<std::string>& points,
                        const std::vector<std::vector<nlohmann::json>>& documents) {
  std::vector<TextTable::Column> columns{{"#", Align::Right}, {"configuration"}};
  for (const auto& p : points) columns.push_back({p, Align::Right});
  TextTable t(columns);
  // The suite's rows by index, in order, whichever points they ran at.
  std::map<int, std::string> labels;
  for (const auto& docs : documents)
    for (const auto& doc : docs)
      if (doc.value("implementation", "libtorch") == "libtorch" && !doc["suite"].is_null())
        labels.emplace(doc["suite"]["index"].get<int>(), doc["suite"]["label"].get<std::string>());
  bool unresolved = false;
  for (const auto& [index, label] : labels) {
    if (index == 0) continue;  // the baseline every cell divides by
    std::vector<std::string> row{std::to_string(index), label};
    for (const auto& docs : documents) {
      const nlohmann::json *doc = nullptr, *base = nullptr;
      for (const auto& d : docs) {
        if (d.value("implementation", "libtorch") != "libtorch" || d["suite"].is_null()) continue;
        if (d["suite"]["index"] == index) doc = &d;
        if (d["suite"]["index"] == 0) base = &d;
      }
      const auto ran = [](const nlohmann::json* d) {
        return d && (*d)["status"] == "ok" && !(*d)["summary"].is_null();
      };
      row.push_back(!doc         ? "-"
                    : !ran(doc)  ? (*doc)["status"].get<std::string>()
                    : !ran(base) ? "no baseline"
                                 : speedup_cell(*doc, *base, unresolved));
    }
    t.add_row(std::move(row));
  }
  return "x baseline [95%] at each point of the sweep (tok/s over the point's own baseline)\n" + t.str() +
         (unresolved ? "n.s.: the 95% interval contains 1.00, no measurable change.\n" : "") +
         "./report draws each configuration's speedup against the axis, with the interval as a band.\n";
}

}  // namespace stepwise::ablations
