// The result document (ablations/run/result_document.h): what a row that never ran records, so the report and the gate
// can still read it against results/schema.json.
#include "ablations/run/result_document.h"

#include "ablations/command_line/cli.h"
#include "ablations/command_line/resolve.h"
#include "ablations/run/plan.h"
#include "ablations/run/suite.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace stepwise::ablations
