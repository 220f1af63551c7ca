// --count-ops: the summary of counted steps (the last one's counts, what varied between them), the Python row's raw
// counts read back, and a real profiled step: its ATen ops by name and, through the counting CPU allocator, its CPU
// allocations.
#include "bench/trace/op_counts.h"
#include "bench/cpu_tensor_memory.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

namespace stepwise::bench {
namespace {

StepWork work(int64_t adds, int64_t cpu_bytes) {
  StepWork w;
  w.aten_ops = {{"aten::add", adds}, {"aten::mm", 2}};
  w.allocations["cpu"] = {3, cpu_bytes};
  return w;
}

TEST(OpCounts, TheSummaryIsTheLastStepWithItsTotals) {
  const auto j = op_counts_json({work(4, 96), work(4, 96)}, /*device_activities_counted=*/false);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["steps_counted"], 2);
  EXPECT_TRUE(j["same_each_step"].get<bool>());
  EXPECT_TRUE(j["varying"].empty());
  const auto& s = j["per_step"];
  EXPECT_EQ(s["aten_ops"]["aten::add"], 4);
  EXPECT_EQ(s["aten_op_total"], 6);
  EXPECT_EQ(s["allocations"]["cpu"]["count"], 3);
  EXPECT_EQ(s["allocations"]["cpu"]["bytes"], 96);
  EXPECT_FALSE(s["allocations"].contains("cuda"));
  EXPECT_TRUE(s["device_activities"].is_null());  // a CPU has none to count: null, not an empty map
  EXPECT_TRUE(s["device_activity_total"].is_null());
  EXPECT_TRUE(s["runtime_calls"].is_null());
  EXPECT_TRUE(s["runtime_call_total"].is_null());
  EXPECT_TRUE(s["launch_total"].is_null());
}

// A CUDA graph's step: the optimizer's kernels launched one by one, the forward and backward as one graph.
TEST(OpCounts, OnAGpuTheLaunchesAreTheRuntimeCallsThatLaunchWork) {
  auto w = work(4, 96);
  w.device_activities = {{"void at::native::vectorized_elementwise_kernel", 40}, {"Memset (Device)", 2}};
  w.runtime_calls = {{"cudaLaunchKernel", 7}, {"cuLaunchKernel", 3}, {"cudaGraphLaunch", 1}, {"cudaMemsetAsync", 2}};
  const auto j = op_counts_json({w, w}, /*device_activities_counted=*/true);
  const auto& s = j["per_step"];
  EXPECT_EQ(s["device_activity_total"], 42);
  EXPECT_EQ(s["runtime_calls"]["cudaGraphLaunch"], 1);
  EXPECT_EQ(s["runtime_call_total"], 13);
  EXPECT_EQ(s["launch_total"], 11);  // the memset is a runtime call, not a launch
  auto more = w;
  ++more.runtime_calls["cudaLaunchKernel"];
  EXPECT_EQ(op_counts_json({w, more}, true)["varying"]["runtime:cudaLaunchKernel"], nlohmann::json({7, 8}));
}

// The same names as tests/python/test_op_counts.py's: both rows sort an event the same way.
TEST(OpCounts, ACudaApiCallIsKnownByItsName) {
  for (const char* name : {"cudaLaunchKernel", "cudaLaunchKernelExC_v11060", "cuLaunchKernel", "cuLaunchKernelEx",
                           "cudaGraphLaunch", "cudaMemcpyAsync", "cudaStreamSynchronize"})
    EXPECT_TRUE(is_cuda_api_call(name)) << name;
  for (const char* name : {"aten::add", "cutlass::Kernel2<cutlass_80_tensorop>", "cuda", "cu", "cudnn::gemm",
                           "Optimizer.step#AdamW.step", "[memory]", "curand_init"})
    EXPECT_FALSE(is_cuda_api_call(name)) << name;
  EXPECT_TRUE(is_launch("cudaGraphLaunch"));
  EXPECT_TRUE(is_launch("cuLaunchKernel"));
  EXPECT_FALSE(is_launch("cudaMemcpyAsync"));
  EXPECT_FALSE(is_launch("Launch"));
}

TEST(OpCounts, StepsThatDifferSaySoWithEveryStepsValue) {
  auto third = work(5, 96);
  third.aten_ops["aten::clone"] = 1;
  const auto j = op_counts_json({work(4, 96), work(4, 128), third}, /*device_activities_counted=*/true);
  EXPECT_FALSE(j["same_each_step"].get<bool>());
  EXPECT_EQ(j["varying"]["aten::add"], nlohmann::json({4, 4, 5}));
  EXPECT_EQ(j["varying"]["aten::clone"], nlohmann::json({0, 0, 1}));  // absent from a step: 0 there
  EXPECT_EQ(j["varying"]["allocations.cpu.bytes"], nlohmann::json({96, 128, 96}));
  EXPECT_FALSE(j["varying"].contains("aten::mm"));
  EXPECT_EQ(j["per_step"]["aten_ops"]["aten::add"], 5);  // the last step's
  // On a GPU both device types are listed, even at zero, and the activities are a map.
  EXPECT_EQ(j["per_step"]["allocations"]["cuda"]["count"], 0);
  EXPECT_EQ(j["per_step"]["device_activity_total"], 0);
}

TEST(OpCounts, ThePythonRowsRawCountsReadBack) {
  const auto raw = nlohmann::json::parse(R"([
    {"aten_ops": {"aten::add": 4, "aten::mm": 2}, "allocations": {"cpu": {"count": 3, "bytes": 96}},
     "device_activities": null, "runtime_calls": null}])");
  const auto steps = step_work_from_json(raw);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0], work(4, 96));
  const auto gpu = step_work_from_json(nlohmann::json::parse(R"([
    {"aten_ops": {}, "allocations": {}, "device_activities": {"k": 2}, "runtime_calls": {"cudaLaunchKernel": 2}}])"));
  EXPECT_EQ(gpu.at(0).runtime_calls.at("cudaLaunchKernel"), 2);
  EXPECT_THROW(step_work_from_json(nlohmann::json::parse(R"([{"aten_ops": {}}])")), std::invalid_argument);
  EXPECT_THROW(step_work_from_json(nlohmann::json::object()), std::invalid_argument);
}

// A step of two ATen calls on (256) floats, 1 KiB each.
class OnesTimesTwo final : public Step {
 public:
  at::Tensor operator()() override { return at::ones({256}) * 2; }
  void time_phases(PhaseMarks*) override {}
  int probe_steps() const override { return 1; }
  std::string memory_scope() const override { return "none"; }
  std::string allreduce() const override { return "none"; }
};

// Each profiled test runs in a process of its own (gtest's threadsafe death-test style: a fresh copy of the binary
// runs the one test) that ends with _Exit, running no static destructor. A process that has run the Kineto profiler
// on a machine without a GPU can corrupt its heap on the way out (the CI failure of the bench shard that ran this
// test in-process: "malloc(): unsorted double linked list corrupted" in libcudart's exit handler, after every test
// had passed, now and then, on a loaded machine); the profiled step itself is what is tested here, and a
// child that reports and _Exits tests it without the exit.
[[noreturn]] void exit_reporting(bool passed, const nlohmann::json& counted) {
  std::cerr << counted.dump() << std::endl;
  std::_Exit(passed ? 0 : 1);
}

TEST(OpCountsDeathTest, AProfiledStepCountsItsOpsTheSameEachTime) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        OnesTimesTwo step;
        const auto j = count_step_work(c10::Device(c10::kCPU), step, 3);
        if (j.value("status", "") != "ok") exit_reporting(false, j);
        const auto& ops = j.at("per_step").at("aten_ops");
        exit_reporting(j.at("steps_counted") == 3 && j.at("same_each_step").get<bool>() &&
                           ops.value("aten::ones", 0) == 1 && ops.value("aten::mul", 0) >= 1,
                       j);
      },
      ::testing::ExitedWithCode(0), "");
}

// The counting allocator, once installed, stays for every later test of the process: one more reason for a child.
TEST(OpCountsDeathTest, TheCountingCpuAllocatorReportsItsAllocationsToTheProfiler) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        count_cpu_tensor_bytes();
        OnesTimesTwo step;
        const auto j = count_step_work(c10::Device(c10::kCPU), step, 2);
        if (j.value("status", "") != "ok") exit_reporting(false, j);
        const auto& cpu = j.at("per_step").at("allocations").at("cpu");
        // the ones and the product, 1 KiB each (a wrapped scalar may add a few bytes)
        exit_reporting(cpu.at("count").get<int64_t>() >= 2 && cpu.at("bytes").get<int64_t>() >= 2048, j);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace stepwise::bench
