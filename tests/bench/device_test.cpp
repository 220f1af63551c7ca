// Device helpers: the dedicated side streams are made once per role and device and never come from PyTorch's
// rotating stream pool, so no amount of configurations makes the copy stream alias the graph stream (or NCCL's).
#include "bench/device.h"

#include <torch/cuda.h>

#ifdef STEPWISE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

#include <gtest/gtest.h>

namespace stepwise::bench {
namespace {

TEST(Streams, TheCpuHasNoDedicatedStreams) {
  EXPECT_THROW(dedicated_stream(StreamRole::Copy, c10::kCPU), std::invalid_argument);
}

TEST(Streams, DedicatedStreamsAreCreatedOnceAndNeverComeFromThePool) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "needs a CUDA device (compiled, not run here)";
#ifdef STEPWISE_WITH_CUDA
  const c10::Device gpu(c10::kCUDA, 0);
  const auto copy = dedicated_stream(StreamRole::Copy, gpu), graph = dedicated_stream(StreamRole::Graph, gpu);
  EXPECT_NE(copy, graph);
  // Twice the pool's size in requests, as many configurations would make: the pool comes round, ours stay apart.
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(dedicated_stream(StreamRole::Copy, gpu), copy);
    EXPECT_EQ(dedicated_stream(StreamRole::Graph, gpu), graph);
    const c10::Stream pooled = at::cuda::getStreamFromPool(/*isHighPriority=*/i % 2 == 0, 0);
    EXPECT_NE(pooled, copy);
    EXPECT_NE(pooled, graph);
  }
#endif
}

}  // namespace
}  // namespace stepwise::bench
