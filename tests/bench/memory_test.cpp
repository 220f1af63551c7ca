// Peak memory windows: the CPU reset reports whether the kernel took it, so a peak is never labelled "the measured
// steps" while it covers the whole process; the estimate behind the out-of-memory pre-flight grows with the batch.
#include "bench/memory.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace stepwise::bench {
namespace {

TEST(PeakMemory, AResetTheKernelRefusesIsReportedNotAssumed) {
  // No such file: the write cannot happen, and the caller must learn it (it then records the whole-process scope).
  EXPECT_FALSE(reset_peak_memory(c10::Device(c10::kCPU), "/nonexistent-dir/clear_refs"));
  // A file that takes the write stands in for a kernel that accepts it.
  const auto path = std::filesystem::temp_directory_path() / "stepwise_clear_refs_test";
  EXPECT_TRUE(reset_peak_memory(c10::Device(c10::kCPU), path.c_str()));
  std::ifstream written(path);
  std::string value;
  written >> value;
  EXPECT_EQ(value, "5");  // "5" resets VmHWM, the peak resident set size
  std::filesystem::remove(path);
}

// The peak grows by what a window touches, measured from a reset: loading libtorch alone set a process peak of
// hundreds of MB, which any later block would stay under.
TEST(PeakMemory, TheProcessPeakGrowsByWhatTheWindowTouched) {
  if (!reset_peak_memory(c10::Device(c10::kCPU)))
    GTEST_SKIP() << "the kernel refused /proc/self/clear_refs: there is no window to measure from";
  const auto before = read_memory(c10::Device(c10::kCPU));
  ASSERT_EQ(before.kind, "process_rss");
  ASSERT_TRUE(before.peak_rss_bytes);
  constexpr size_t kTouched = 64 << 20;  // 64 MiB, written so the pages are resident
  // Fresh pages from the kernel, not malloc's: in a test process that freed blocks before, malloc may hand back a
  // region already resident, which would raise no peak.
  void* block = mmap(nullptr, kTouched, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(block, MAP_FAILED);
  std::memset(block, 1, kTouched);
  const auto after = read_memory(c10::Device(c10::kCPU));
  EXPECT_GE(*after.peak_rss_bytes - *before.peak_rss_bytes, static_cast<int64_t>(kTouched * 9 / 10))
      << static_cast<int>(static_cast<volatile char*>(block)[kTouched / 2]);
  munmap(block, kTouched);
}

TEST(StepEstimate, GrowsWithTheBatch) {
  RunConfig small;
  small.model = model::preset("tiny").config;
  small.batch_size = 4;
  small.seq_len = 64;
  RunConfig large = small;
  large.batch_size = 64;
  // Weights, gradients and moments stay; the activations (logits above all) scale with the batch.
  EXPECT_GT(estimated_step_bytes(small), 0);
  EXPECT_GT(estimated_step_bytes(large), 2 * estimated_step_bytes(small));
}

}  // namespace
}  // namespace stepwise::bench
