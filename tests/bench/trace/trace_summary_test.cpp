// From synthetic activity records to the trace summary: kernels per step, busy and idle time, top kernels,
// which attention kernel ran, and pinned vs pageable host-to-device copies.
#include "bench/trace/trace_summary.h"

#include <gtest/gtest.h>

namespace stepwise::bench {
namespace {

constexpr uint64_t kMs = 1'000'000;  // ns

KernelRecord kernel(const char* name, uint64_t start_ms, uint64_t end_ms) {
  return {name, start_ms * kMs, end_ms * kMs};
}

TEST(TraceSummary, KernelsBusyAndIdleTimePerStep) {
  // Step 1: kernels [1,3) and [4,6) -> busy 4, idle 1. Step 2: [10,14) and an overlapping [12,16) -> busy 6, idle 0.
  const std::vector<KernelRecord> kernels{kernel("gemm", 1, 3), kernel("gemm", 4, 6), kernel("gemm", 10, 14),
                                          kernel("softmax_warp_forward", 12, 16), kernel("outside", 30, 31)};
  const std::vector<StepWindow> steps{{0, 8 * kMs}, {9 * kMs, 20 * kMs}};
  const auto s = summarize_trace(kernels, {}, steps);
  EXPECT_EQ(s.steps_traced, 2u);
  EXPECT_DOUBLE_EQ(s.kernels_per_step, 2.0);
  EXPECT_DOUBLE_EQ(s.kernel_ms_per_step, 5.0);
  EXPECT_DOUBLE_EQ(s.idle_ms_per_step, 0.5);
  EXPECT_DOUBLE_EQ(s.busy_fraction, 10.0 / 11.0);
}

TEST(TraceSummary, TopKernelsByTotalTime) {
  const std::vector<KernelRecord> kernels{kernel("a", 1, 2), kernel("b", 2, 5), kernel("a", 5, 6), kernel("c", 6, 7)};
  const auto s = summarize_trace(kernels, {}, {{0, 10 * kMs}}, 2);
  ASSERT_EQ(s.top_kernels.size(), 2u);
  EXPECT_EQ(s.top_kernels[0].name, "b");
  EXPECT_DOUBLE_EQ(s.top_kernels[0].total_ms, 3.0);
  EXPECT_EQ(s.top_kernels[1].name, "a");
  EXPECT_EQ(s.top_kernels[1].count, 2u);
  EXPECT_DOUBLE_EQ(s.top_kernels[1].mean_us, 1000.0);
}

TEST(TraceSummary, RecognisesTheAttentionKernelThatRan) {
  auto family = [](std::vector<const char*> names) {
    std::vector<KernelRecord> k;
    for (const char* n : names) k.push_back({n, 0, 1});
    return attention_kernel_family(k);
  };
  EXPECT_EQ(family({"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128>>(Flash_fwd_params)"}),
            "flash");
  EXPECT_EQ(family({"fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float>::Params)"}),
            "efficient");
  EXPECT_EQ(family({"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3"}), "cudnn");
  EXPECT_EQ(family({"ampere_sgemm_128x64_tn",
                    "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(...)"}),
            "math");
  // The loss's log-softmax over the vocabulary is not attention.
  EXPECT_EQ(family({"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
                    "at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(...)"}),
            "unknown");
}

TEST(TraceSummary, HostToDeviceCopiesPinnedPageableOrMixed) {
  using Kind = MemcpyRecord::Kind;
  const std::vector<StepWindow> steps{{0, 10 * kMs}};
  const MemcpyRecord pinned{Kind::HostToDevice, true, 1'000'000, 1 * kMs, 1 * kMs + 100'000};     // 10 GB/s
  const MemcpyRecord pageable{Kind::HostToDevice, false, 1'000'000, 2 * kMs, 2 * kMs + 400'000};  // 2.5 GB/s
  const MemcpyRecord d2h{Kind::DeviceToHost, false, 4, 3 * kMs, 3 * kMs + 10};
  auto s = summarize_trace({}, {pinned, d2h}, steps);
  EXPECT_EQ(s.h2d_count, 1u);
  EXPECT_EQ(*s.h2d_source, "pinned");
  EXPECT_DOUBLE_EQ(s.h2d_gbps, 10.0);
  EXPECT_EQ(*summarize_trace({}, {pageable}, steps).h2d_source, "pageable");
  s = summarize_trace({}, {pinned, pageable}, steps);
  EXPECT_EQ(*s.h2d_source, "mixed");
  EXPECT_EQ(s.h2d_bytes, 2'000'000u);
  EXPECT_FALSE(summarize_trace({}, {d2h}, steps).h2d_source);
}

TEST(TraceSummary, RecordsWithoutValidTimestampsAreCountedNotSummed) {
  // CUPTI short of device buffer space delivers start = end = 0, or end < start; unsigned arithmetic would wrap.
  const std::vector<KernelRecord> kernels{kernel("gemm", 1, 3), {"zero", 0, 0}, {"reversed", 5 * kMs, 4 * kMs}};
  const auto s = summarize_trace(kernels, {}, {{0, 10 * kMs}});
  EXPECT_EQ(s.invalid_records, 2u);
  EXPECT_DOUBLE_EQ(s.kernels_per_step, 1.0);
  EXPECT_DOUBLE_EQ(s.kernel_ms_per_step, 2.0);
  EXPECT_DOUBLE_EQ(s.idle_ms_per_step, 0.0);
  ASSERT_EQ(s.top_kernels.size(), 1u);
  EXPECT_EQ(s.top_kernels[0].name, "gemm");
}

TEST(TraceSummary, JsonHasTheKeysReportsRead) {
  const auto j = trace_json(summarize_trace({kernel("k", 1, 2)}, {}, {{0, 3 * kMs}}));
  for (const char* key :
       {"status", "steps_traced", "invalid_records", "dropped_records", "kernels_per_step", "kernel_ms_per_step",
        "idle_ms_per_step", "busy_fraction", "top_kernels", "attention_kernel", "memcpy"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(trace_unavailable_json("no GPU")["reason"], "trace unavailable: no GPU");
  EXPECT_FALSE(trace_unavailable_json("no GPU").contains("profiler_loaded"));
  EXPECT_EQ(trace_unavailable_json("cuptiSubscribe failed", /*profiler_loaded=*/false)["profiler_loaded"], false);
}

}  // namespace
}  // namespace stepwise::bench
