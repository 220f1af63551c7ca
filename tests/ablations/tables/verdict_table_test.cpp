// The console's second time-to-target table: a row's ratio with its interval and p, the budget and where it came
// from, the loss at it and the record rule's status; the baseline says so; documents without a target add nothing.
#include "ablations/tables/verdict_table.h"

#include <gtest/gtest.h>

namespace stepwise::ablations {
namespace {

nlohmann::json doc(int index, const std::string& label, nlohmann::json verdict, nlohmann::json rule,
                   const std::string& guard) {
  return {{"implementation", "libtorch"},
          {"name", label},
          {"suite", {{"index", index}, {"label", label}}},
          {"convergence", {{"guard", {{"status", guard}}}, {"verdict", verdict}, {"record_rule", rule}}}};
}

nlohmann::json rule(const std::string& status, nlohmann::json p) {
  return {{"budget", 140},    {"budget_from", "upper median of steps to target"},
          {"mean", 6.7812},   {"sd", 0.0123},
          {"n", 5},           {"p", p},
          {"record_p", 0.01}, {"target_loss", 6.8},
          {"status", status}, {"reason", "fewer than 2 seeds with a loss"}};
}

TEST(VerdictTable, BothVerdictsPerRow) {
  const nlohmann::json ratio{{"ratio", 1.25}, {"low", 1.1}, {"high", 1.4}, {"p", 0.004}, {"n", 5}, {"baseline_n", 5}};
  const auto table = verdict_table({doc(0, "baseline", nullptr, rule("meets the record rule", 0.00031), "baseline"),
                                    doc(1, "+muon", {{"time", ratio}, {"steps", ratio}},
                                        rule("does not meet the record rule", 0.2), "slower to target")});
  EXPECT_NE(table.find("x1.25 [1.10-1.40]"), std::string::npos) << table;
  EXPECT_NE(table.find("0.004"), std::string::npos) << table;
  EXPECT_NE(table.find("3.1e-04"), std::string::npos) << "a small p keeps its digits\n" << table;
  EXPECT_NE(table.find("140 (median)"), std::string::npos) << table;
  EXPECT_NE(table.find("6.7812 +- 0.0123 (5)"), std::string::npos) << table;
  EXPECT_NE(table.find("does not meet"), std::string::npos) << table;
  EXPECT_NE(table.find("meets"), std::string::npos) << table;
  EXPECT_NE(table.find("at p < 0.01"), std::string::npos) << table;
}

TEST(VerdictTable, APThatCouldNotReachTheLevelIsNotJudged) {
  // Gehan's exact test at 3 vs 3 with a miss: its p of 0.4 could never have been below 0.1.
  const nlohmann::json ratio{{"ratio", 0.5}, {"low", 0.3}, {"high", nullptr}, {"p", 0.4},          {"min_p", 0.1},
                             {"n", 2},       {"runs", 3},  {"baseline_n", 3}, {"baseline_runs", 3}};
  const auto table = verdict_table(
      {doc(0, "baseline", nullptr, rule("meets the record rule", 0.001), "baseline"),
       doc(1, "+muon", {{"time", ratio}, {"steps", ratio}}, rule("meets the record rule", 0.001), "not judged")});
  EXPECT_NE(table.find("n.j."), std::string::npos) << table;
  EXPECT_EQ(table.find("0.400"), std::string::npos) << table;
}

TEST(VerdictTable, NotJudgedSaysWhyAndNoTargetMeansNoTable) {
  const auto table = verdict_table({doc(0, "baseline", nullptr, rule("not judged", nullptr), "baseline")});
  EXPECT_NE(table.find("not judged: fewer than 2"), std::string::npos) << table;
  EXPECT_EQ(verdict_table({nlohmann::json{{"convergence", nullptr}}}), "");
}

}  // namespace
}  // namespace stepwise::ablations
