// The phase table printed at the end of a run: a column per phase any row marked, in the step's order.
#include "ablations/tables/phase_table.h"

#include <gtest/gtest.h>

namespace stepwise::ablations {
namespace {

nlohmann::json row(int index, const std::string& label, const nlohmann::json& phases) {
  nlohmann::json split = nullptr;
  if (!phases.is_null()) {
    split = {
        {"clock", "steady_clock"}, {"phases", nlohmann::json::array()}, {"step_median_ms", 10.0}, {"note", nullptr}};
    for (const auto& [name, ms] : phases.items())
      split["phases"].push_back({{"name", name}, {"median_ms", ms}, {"share", ms.get<double>() / 10.0}, {"ms", {ms}}});
  }
  return {{"status", "ok"},
          {"implementation", "libtorch"},
          {"name", "suite/" + label},
          {"suite", {{"index", index}, {"label", label}}},
          {"phases", split}};
}

TEST(PhaseTable, OneColumnPerMarkedPhaseInTheStepsOrder) {
  // nlohmann's objects sort their keys: the table, not the input, puts the phases in the step's order.
  const auto table = phase_table({row(0, "baseline", {{"optimizer", 1.0}, {"forward", 3.0}, {"backward", 6.0}}),
                                  row(1, "muon", {{"optimizer", 4.0}, {"forward", 3.0}, {"backward", 6.0}}),
                                  row(2, "failed", nullptr)});
  const auto header = table.substr(0, table.find('\n'));
  EXPECT_LT(header.find("forward"), header.find("backward"));
  EXPECT_LT(header.find("backward"), header.find("optimizer"));
  EXPECT_EQ(header.find("comm"), std::string::npos);
  EXPECT_NE(table.find("4.00 (40%)"), std::string::npos) << table;
  EXPECT_EQ(table.find("failed"), std::string::npos) << table;  // no split, no row
  EXPECT_EQ(table.find("fwd+bwd:"), std::string::npos);
}

TEST(PhaseTable, CompilesOnePhaseIsNamedAndNoSplitIsNoTable) {
  const auto table = phase_table({row(0, "compile", {{"forward_backward", 8.0}, {"optimizer", 1.0}})});
  EXPECT_NE(table.find("fwd+bwd:"), std::string::npos) << table;
  EXPECT_EQ(phase_table({row(0, "baseline", nullptr)}), "");
}

}  // namespace
}  // namespace stepwise::ablations
