// The op-count tables printed at the end of a --count-ops run: per configuration the rows side by side, the engine's
// minus eager's, the differing operators largest gap first, and what a row could not count or counted unevenly.
#include "ablations/tables/op_count_table.h"

#include "bench/trace/op_counts.h"

#include <gtest/gtest.h>

namespace stepwise::ablations {
namespace {

nlohmann::json row(int index, const std::string& label, const std::string& implementation,
                   const nlohmann::json& op_counts) {
  return {{"status", "ok"},
          {"implementation", implementation},
          {"name", "suite/" + label},
          {"suite", {{"name", "suite"}, {"index", index}, {"label", label}}},
          {"op_counts", op_counts}};
}

nlohmann::json counted(std::map<std::string, int64_t> ops, int64_t cpu_bytes) {
  bench::StepWork w;
  w.aten_ops = std::move(ops);
  w.allocations["cpu"] = {static_cast<int64_t>(w.aten_ops.size()), cpu_bytes};
  return bench::op_counts_json({w, w}, /*device_activities_counted=*/false);
}

// The line of `table` that starts (after its indent) with `what`.
std::string line_of(const std::string& table, const std::string& what) {
  size_t at = 0;
  while (at < table.size()) {
    const size_t end = table.find('\n', at);
    const auto line = table.substr(at, end - at);
    if (line.find_first_not_of(' ') != std::string::npos && line.substr(line.find_first_not_of(' ')).starts_with(what))
      return line;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return "";
}

TEST(OpCountTable, TheEngineBesideEagerWithTheDifferingOpsLargestGapFirst) {
  const auto table = op_count_table({
      row(0, "baseline", "libtorch", counted({{"aten::mul", 30}, {"aten::add", 12}, {"aten::mm", 8}}, 5000)),
      row(0, "baseline", "python-eager", counted({{"aten::mul", 20}, {"aten::add", 14}, {"aten::mm", 8}}, 4000)),
  });
  EXPECT_NE(table.find("[suite 0] baseline: one step's work, 2 steps counted"), std::string::npos) << table;
  EXPECT_NE(line_of(table, "ATen ops").find("+8"), std::string::npos) << table;  // 50 - 42
  EXPECT_NE(line_of(table, "cpu bytes allocated").find("+1,000"), std::string::npos) << table;
  EXPECT_NE(line_of(table, "aten::add").find("-2"), std::string::npos) << table;
  EXPECT_LT(table.find("aten::mul"), table.find("aten::add")) << table;  // a gap of 10 before one of 2
  EXPECT_EQ(line_of(table, "aten::mm"), "") << table;                    // the same in both: not listed
  EXPECT_EQ(table.find("device activities"), std::string::npos) << table;
}

// On a GPU: the kernels each row ran and the host's launches, the CUDA graph's one replay beside eager's launches.
TEST(OpCountTable, OnAGpuTheKernelsAndTheLaunchesOfEachRow) {
  const auto on_gpu = [](int64_t kernels, std::map<std::string, int64_t> calls) {
    bench::StepWork w;
    w.aten_ops["aten::add"] = 1;
    w.device_activities["kernel"] = kernels;
    w.runtime_calls = std::move(calls);
    return bench::op_counts_json({w}, /*device_activities_counted=*/true);
  };
  const auto table = op_count_table({
      row(1, "compile", "libtorch", on_gpu(300, {{"cudaGraphLaunch", 1}, {"cudaLaunchKernel", 4}})),
      row(1, "compile", "python-eager", on_gpu(310, {{"cudaLaunchKernel", 305}, {"cudaMemsetAsync", 5}})),
  });
  EXPECT_NE(line_of(table, "device activities").find("-10"), std::string::npos) << table;
  EXPECT_NE(line_of(table, "CUDA runtime calls").find("-305"), std::string::npos) << table;  // 5 - 310
  EXPECT_NE(line_of(table, "launches").find("-300"), std::string::npos) << table;            // 5 - 305
  EXPECT_NE(line_of(table, "cudaGraphLaunch").find("+1"), std::string::npos) << table;
  EXPECT_NE(line_of(table, "cudaLaunchKernel").find("-301"), std::string::npos) << table;
  EXPECT_EQ(line_of(table, "cudaMemsetAsync"), "") << table;  // a runtime call, not a launch
}

TEST(OpCountTable, AConfigurationPerTableAndWhatARowCouldNotCount) {
  const auto adds = [](int64_t n) {
    bench::StepWork w;
    w.aten_ops["aten::add"] = n;
    return w;
  };
  const auto uneven = bench::op_counts_json({adds(1), adds(2)}, /*device_activities_counted=*/false);
  const auto table = op_count_table({
      row(0, "baseline", "libtorch", uneven),
      row(0, "baseline", "python-eager", bench::op_counts_unavailable_json("the counted pass failed: boom")),
      row(1, "flash", "libtorch", counted({{"aten::add", 1}}, 8)),
      row(2, "not counted", "libtorch", nullptr),
  });
  EXPECT_NE(table.find("libtorch: the counted steps differed (shown: the last): aten::add [1,2]"), std::string::npos)
      << table;
  EXPECT_NE(table.find("python-eager: op counts unavailable: the counted pass failed: boom"), std::string::npos)
      << table;
  EXPECT_EQ(table.find("libtorch - eager"), std::string::npos) << table;  // eager has no counts to subtract
  EXPECT_NE(table.find("[suite 1] flash"), std::string::npos) << table;
  EXPECT_EQ(table.find("not counted"), std::string::npos) << table;
  EXPECT_EQ(op_count_table({row(0, "baseline", "libtorch", nullptr)}), "");
}

}  // namespace
}  // namespace stepwise::ablations
