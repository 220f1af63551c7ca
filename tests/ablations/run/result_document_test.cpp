// The result document (ablations/run/result_document.h): what a row that never ran records, so the report and the gate
// can still read it against results/schema.json; what a muon row records of Newton-Schulz's dtype.
#include "ablations/run/result_document.h"

#include "ablations/command_line/cli.h"
#include "ablations/command_line/resolve.h"
#include "ablations/run/plan.h"
#include "ablations/run/suite.h"
#include "bench/device.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace stepwise::ablations {
namespace {

// A host_allocator row whose own process never started leaves a RunResult with no batch set; its result keeps the
// planned batch (the schema's minimum is 1: a batch of 0 made the whole run unreadable by ./report).
TEST(ResultDocument, ARowThatFailedBeforeItsBatchWasSetKeepsThePlannedBatch) {
  std::vector<std::string> args{"ablate", "--enable=dynamic_mask", "--device=cpu", "--preset=tiny", "--batch-size=4"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  auto request = parse_command_line(static_cast<int>(argv.size()), argv.data());
  const auto suite = single_configuration(request.enable, false);
  resolve_run(request, suite);
  const auto planned = plan_suite(suite, request.run);
  bench::RunResult failed;
  failed.status = "failed";
  failed.reason = "the row's own process exited with status 127 before writing its result";
  const RunContext context{"run", nlohmann::json::object(), nullptr};
  const auto doc = result_document(context, suite, planned.at(0), "libtorch", &failed, {});
  EXPECT_EQ(doc["config"]["batch_size"], 4);
  EXPECT_EQ(doc["status"], "failed");
}

// config_json of a row planned from the command line.
nlohmann::json planned_config(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  auto request = parse_command_line(static_cast<int>(argv.size()), argv.data());
  const auto suite = single_configuration(request.enable, false);
  resolve_run(request, suite);
  return config_json(plan_suite(suite, request.run).at(0));
}

// muon_ns_dtype keeps what was asked, muon_ns_dtype_used what Newton-Schulz ran in on the row's device: auto resolved
// as this CPU resolves it (bf16 where native, else fp32), a dtype asked for as itself; null without muon.
TEST(ResultDocument, AMuonRowRecordsTheNewtonSchulzDtypeAskedAndTheOneThatRan) {
  const std::vector<std::string> base{"ablate", "--enable=muon", "--device=cpu", "--preset=tiny"};
  const auto auto_row = planned_config(base);
  EXPECT_EQ(auto_row["muon_ns_dtype"], "auto");
  EXPECT_EQ(auto_row["muon_ns_dtype_used"], bench::cpu_bf16_emulated() ? "fp32" : "bf16");
  for (const std::string dtype : {"fp32", "bf16"}) {
    auto args = base;
    args.push_back("--muon-ns-dtype=" + dtype);
    const auto row = planned_config(args);
    EXPECT_EQ(row["muon_ns_dtype"], dtype);
    EXPECT_EQ(row["muon_ns_dtype_used"], dtype);
  }
  EXPECT_TRUE(planned_config({"ablate", "--device=cpu", "--preset=tiny"})["muon_ns_dtype_used"].is_null());
}

}  // namespace
}  // namespace stepwise::ablations
