// verdict_table: one line per configuration trained to a target, the two verdicts side by side, then their legend.
#include "ablations/verdict_table.h"

#include "ablations/results_table.h"
#include "ablations/text_table.h"

#include <cstdio>

namespace stepwise::ablations {

namespace {

using Align = TextTable::Align;

// "x0.84 [0.71-0.95]": a ratio of medians with its interval, "-" where there is none.
std::string ratio_cell(const nlohmann::json& v) {
  if (v.is_null() || v["ratio"].is_null()) return "-";
  std::string cell = "x" + fixed(v["ratio"].get<double>(), 2);
  if (!v["low"].is_null())
    cell += " [" + fixed(v["low"].get<double>(), 2) + "-" + fixed(v["high"].get<double>(), 2) + "]";
  return cell;
}

// A level or a target as given: 0.01, 6.8.
std::string general(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

// Three decimals, or two significant digits below 0.001 (the speedrun's p are often that small).
std::string p_cell(const nlohmann::json& p) {
  if (p.is_null()) return "-";
  const double v = p.get<double>();
  if (v >= 0.001 || v == 0) return fixed(v, 3);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1e", v);
  return buf;
}

std::string budget_cell(const nlohmann::json& rule) {
  if (rule["budget"].is_null()) return "-";
  const std::string from = rule["budget_from"].get<std::string>() == "--step-budget" ? "given" : "median";
  return with_commas(rule["budget"].get<double>()) + " (" + from + ")";
}

std::string loss_cell(const nlohmann::json& rule) {
  if (rule["mean"].is_null()) return "-";
  return fixed(rule["mean"].get<double>(), 4) + " +- " + fixed(rule["sd"].get<double>(), 4) + " (" +
         std::to_string(rule["n"].get<int>()) + ")";
}

std::string rule_cell(const nlohmann::json& rule) {
  const auto status = rule["status"].get<std::string>();
  if (status == "meets the record rule") return "meets";
  if (status == "does not meet the record rule") return "does not meet";
  return status + ": " + rule["reason"].get<std::string>();
}

}  // namespace

std::string verdict_table(const std::vector<nlohmann::json>& documents) {
  TextTable t({{"#", Align::Right},
               {"step"},
               {"time x base [95%]", Align::Right},
               {"p", Align::Right},
               {"steps x base [95%]", Align::Right},
               {"p", Align::Right},
               {"budget", Align::Right},
               {"loss at budget (n)", Align::Right},
               {"p one-sided", Align::Right},
               {"speedrun's rule"}});
  bool any = false;
  double record_p = 0, target = 0;
  for (const auto& doc : documents) {
    if (!doc.contains("convergence") || doc["convergence"].is_null()) continue;
    const auto& c = doc["convergence"];
    const auto& v = c.value("verdict", nlohmann::json());
    const auto& rule = c.value("record_rule", nlohmann::json());
    if (v.is_null() && rule.is_null()) continue;
    any = true;
    const auto head = row_head(doc);
    const bool baseline = c["guard"]["status"] == "baseline";
    std::vector<std::string> row{head.index_cell(), head.label};
    if (v.is_null())
      row.insert(row.end(), {baseline ? "baseline" : "-", "", "", ""});
    else
      row.insert(row.end(),
                 {ratio_cell(v["time"]), p_cell(v["time"]["p"]), ratio_cell(v["steps"]), p_cell(v["steps"]["p"])});
    if (rule.is_null()) {
      row.insert(row.end(), {"-", "-", "-", "-"});
    } else {
      record_p = rule["record_p"].get<double>();
      target = rule["target_loss"].get<double>();
      row.insert(row.end(), {budget_cell(rule), loss_cell(rule), p_cell(rule["p"]), rule_cell(rule)});
    }
    t.add_row(row);
  }
  if (!any) return "";
  return t.str() +
         "\nx base: the row's median over the baseline's, over the seeds that reached the target (below 1: sooner), "
         "[95% bootstrap interval]; p: Welch's two-sided t-test on the seeds' values\n"
         "speedrun's rule: the validation loss at the step budget (given, or the upper median of the row's steps to "
         "target) below " +
         general(target) + " by a one-sided t-test at p < " + general(record_p) +
         "; seeds that stopped before the budget were re-run to it, off the clock; judged where a suite runs the "
         "speedrun's techniques, or with --step-budget or --record-p (- elsewhere)\n";
}

}  // namespace stepwise::ablations
