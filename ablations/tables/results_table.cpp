// The one-line summary and the results table, from the result documents.
#include "ablations/tables/results_table.h"

#include "ablations/tables/speedup_cell.h"
#include "ablations/tables/text_table.h"

#include <map>

namespace stepwise::ablations {

namespace {

using Align = TextTable::Align;

std::string step_change(const nlohmann::json& doc) {
  const auto& suite = doc["suite"];
  if (suite.is_null()) return "";
  std::vector<std::string> parts;
  for (const auto& f : suite["added"]) parts.push_back("+" + f.get<std::string>());
  if (suite.contains("removed"))
    for (const auto& f : suite["removed"]) parts.push_back("-" + f.get<std::string>());
  return joined(parts, " ");
}

std::string loss_cell(const nlohmann::json& doc) {
  const auto& loss = doc["summary"]["loss"];
  std::string cell = loss["check"]["status"].get<std::string>();
  if (loss.contains("vs_libtorch")) cell += ", vs C++ " + loss["vs_libtorch"]["status"].get<std::string>();
  return cell;
}

// The GPU held its clocks down (a power or thermal cap) at a phase edge of the row: its figures are the throttled
// GPU's.
bool throttled(const nlohmann::json& doc) {
  const auto state = doc.find("gpu_state");
  return state != doc.end() && state->is_object() && state->value("throttled", false);
}

std::string measured_cell(const nlohmann::json& doc) {
  const auto& summary = doc["summary"];
  const auto& ms = summary["step_ms"];
  std::string cell = fixed(ms["median"], 1) + " (" + fixed(ms["p10"], 1) + "-" + fixed(ms["p90"], 1) + ")";
  if (summary.value("short", false))
    cell += " short n=" + std::to_string(summary["steps"].get<int>()) +
            (ms["noise"].is_null() ? "" : " noise " + percent(ms["noise"].get<double>()));
  if (throttled(doc)) cell += " throttled";
  return cell;
}

}  // namespace

std::string one_line_summary(const nlohmann::json& doc) {
  const auto& summary = doc["summary"];
  std::string reason = doc["reason"].is_string() ? doc["reason"].get<std::string>() : "";
  if (summary.is_null()) return doc["status"].get<std::string>() + (reason.empty() ? "" : ": " + reason);
  const auto& ms = summary["step_ms"];
  const auto& loss = summary["loss"];
  auto loss_text = [](const nlohmann::json& v) { return v.is_null() ? std::string("nan") : fixed(v.get<double>(), 3); };
  std::string line = with_commas(summary["tokens_per_s"].get<double>()) + " tok/s, " +
                     fixed(ms["median"].get<double>(), 1) +
                     " ms/step (n=" + std::to_string(summary["steps"].get<int>()) + ", noise " +
                     (ms["noise"].is_null() ? std::string("n/a") : percent(ms["noise"].get<double>())) +
                     (summary.value("short", false) ? ", short: --max-time before --min-steps" : "") + "), loss " +
                     loss_text(loss["first"]) + " -> " + loss_text(loss["last"]) + " [" +
                     loss["check"]["status"].get<std::string>() + "]";
  if (doc["status"] != "ok") line = doc["status"].get<std::string>() + ": " + reason + "; measured " + line;
  return line;
}

RowHead row_head(const nlohmann::json& doc) {
  const std::string implementation = doc.value("implementation", "libtorch");
  RowHead head;
  head.engine = implementation == "libtorch";
  head.index = doc["suite"].is_null() ? 0 : doc["suite"]["index"].get<int>();
  head.label = !head.engine             ? "  " + implementation
               : doc["suite"].is_null() ? doc["name"].get<std::string>()
                                        : doc["suite"]["label"].get<std::string>();
  return head;
}

std::string results_table(const std::vector<nlohmann::json>& documents) {
  TextTable t({{"#", Align::Right},
               {"step"},
               {"change"},
               {"tok/s", Align::Right},
               {"x prev [95%]", Align::Right},
               {"x base [95%]", Align::Right},
               {"ms/step (p10-p90)", Align::Right},
               {"memory", Align::Right},
               {"MFU", Align::Right},
               {"loss"}});
  const nlohmann::json* baseline = nullptr;
  const nlohmann::json* previous = nullptr;
  std::map<int, const nlohmann::json*> engine_rows;  // suite index -> the libtorch row, for "x C++"
  bool unresolved = false, python = false, any_throttled = false;
  for (const auto& doc : documents) {
    any_throttled = any_throttled || throttled(doc);
    const auto [engine, index, label] = row_head(doc);
    const auto& summary = doc["summary"];
    if (doc["status"] != "ok" || summary.is_null()) {
      t.add_note_row({engine ? std::to_string(index) : "", label, engine ? step_change(doc) : ""},
                     doc["status"].get<std::string>() + ": " +
                         (doc["reason"].is_string() ? doc["reason"].get<std::string>() : "?"));
      continue;
    }
    const auto& mem = summary["memory"]["peak_reserved_bytes"];
    const auto& mfu = summary["mfu"]["value"];
    const std::string memory = mem.is_null() ? "-" : gib(mem.get<double>());
    const std::string mfu_cell = mfu.is_null() ? "-" : percent(mfu.get<double>());
    if (!engine) {
      // A Python row of the configuration above: its speed against stepwise's engine on the same everything.
      python = true;
      const auto it = engine_rows.find(index);
      t.add_row({"", label, "", with_commas(summary["tokens_per_s"].get<double>()), "",
                 it == engine_rows.end() ? "-" : "x C++ " + speedup_cell(doc, *it->second, unresolved),
                 measured_cell(doc), memory, mfu_cell, loss_cell(doc)});
      continue;
    }
    engine_rows[index] = &doc;
    // "x prev" is a step's gain over the step before it: meaningful only where steps accumulate.
    const bool cumulative = doc["suite"].is_null() || doc["suite"]["kind"] == "cumulative";
    const bool is_baseline = doc["suite"].is_null() || index == 0;
    if (is_baseline && !baseline) baseline = &doc;
    t.add_row({std::to_string(index), label, step_change(doc), with_commas(summary["tokens_per_s"].get<double>()),
               previous && cumulative ? speedup_cell(doc, *previous, unresolved) : "-",
               baseline && baseline != &doc ? speedup_cell(doc, *baseline, unresolved) : "-", measured_cell(doc),
               memory, mfu_cell, loss_cell(doc)});
    previous = &doc;
  }
  std::string notes;
  if (unresolved) notes += "n.s.: the 95% interval contains 1.00, so no measurable change (not a gain or a loss)\n";
  if (python)
    notes += "indented rows: PyTorch Python on the same weights and batches; x C++ is its speed over stepwise's\n";
  if (any_throttled)
    notes += "throttled: the GPU held its clocks down (power or thermal cap) during the row; gpu_state says which\n";
  return t.str() + (notes.empty() ? "" : "\n" + notes);
}

}  // namespace stepwise::ablations
