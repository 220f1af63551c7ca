// verdict_table: one line per configuration trained to a target, the two verdicts side by side, then their legend.
#include "ablations/tables/verdict_table.h"

#include "ablations/judges/target_verdict.h"

#include "ablations/tables/results_table.h"
#include "ablations/tables/text_table.h"

#include <cstdio>

namespace stepwise::ablations {

namespace {

using Align = TextTable::Align;

// "x0.84 [0.71-0.95]": a ratio of Kaplan-Meier medians with its interval (an unbounded side "0" or "inf"), "-" where
// there is none; then, where a seed on either side missed the target, the reached fractions: "(2/5 vs 5/5 reached)".
std::string ratio_cell(const nlohmann::json& v) {
  if (v.is_null()) return "-";
  std::string cell = v["ratio"].is_null() ? "-" : "x" + fixed(v["ratio"].get<double>(), 2);
  const auto bound = [](const nlohmann::json& b, const char* none) {
    return b.is_null() ? std::string(none) : fixed(b.get<double>(), 2);
  };
  if (!v["ratio"].is_null() && (!v["low"].is_null() || !v["high"].is_null()))
    cell += " [" + bound(v["low"], "0") + "-" + bound(v["high"], "inf") + "]";
  const auto runs = v.value("runs", 0), baseline_runs = v.value("baseline_runs", 0);
  const auto n = v.value("n", 0), baseline_n = v.value("baseline_n", 0);
  if ((runs && n < runs) || (baseline_runs && baseline_n < baseline_runs))
    cell += " (" + std::to_string(n) + "/" + std::to_string(runs) + " vs " + std::to_string(baseline_n) + "/" +
            std::to_string(baseline_runs) + " reached)";
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

// A verdict's p, or "n.j." where its exact test could not go below the level at these seeds at all (min_p).
std::string verdict_p_cell(const nlohmann::json& v) {
  if (v.contains("min_p") && !v["min_p"].is_null() && v["min_p"].get<double>() >= kVerdictAlpha) return "n.j.";
  return p_cell(v["p"]);
}

std::string budget_cell(const nlohmann::json& rule) {
  if (rule["budget"].is_null()) return "-";
  // Given on the command line, the suite's own, or (a result from before the declared horizon) a row's median.
  const auto source = rule["budget_from"].get<std::string>();
  const std::string from = source == "--step-budget"                     ? "given"
                           : source == "upper median of steps to target" ? "median"
                                                                         : "suite";
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
  bool any = false, any_rule = false;
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
      row.insert(row.end(), {ratio_cell(v["time"]), verdict_p_cell(v["time"]), ratio_cell(v["steps"]),
                             verdict_p_cell(v["steps"])});
    if (rule.is_null()) {
      row.insert(row.end(), {"-", "-", "-", "-"});
    } else {
      any_rule = true;
      record_p = rule["record_p"].get<double>();
      target = rule["target_loss"].get<double>();
      row.insert(row.end(), {budget_cell(rule), loss_cell(rule), p_cell(rule["p"]), rule_cell(rule)});
    }
    t.add_row(row);
  }
  if (!any) return "";
  const std::string rule_note =
      any_rule ? "speedrun's rule: the validation loss at the step budget declared before the runs (--step-budget, or "
                 "the suite's own), which every seed trained to, below " +
                     general(target) + " by a one-sided t-test at p < " + general(record_p) +
                     ", the mean +- sd over n seeds shown; judged where a suite runs the speedrun's techniques, or "
                     "with --step-budget or --record-p (- elsewhere)\n"
               : "speedrun's rule: - (judged where a suite runs the speedrun's techniques, or with --step-budget or "
                 "--record-p)\n";
  return t.str() +
         "\nx base: the row's Kaplan-Meier median over the baseline's, every seed counted (one that missed the target "
         "censored at the horizon; below 1: sooner), [95% bootstrap interval; 0 or inf: unbounded], the reached "
         "fractions where a seed missed; p: Welch's two-sided t-test where every seed reached, Gehan's where any "
         "missed (n.j.: not judged, Gehan's exact test cannot go below 0.05 at these seeds; 4 a side can)\n" +
         rule_note;
}

}  // namespace stepwise::ablations
