// The compile flag's CUDA-graph step. On a GPU: K replayed steps give the same parameters as K eager steps, and
// dropout draws fresh masks on every replay.
// On the CPU: the capturable construction, the refusal, and that the capturable optimizer reads no tensor value
// on the host (run on the meta device, where any .item() would throw).
#include "bench/cuda_graph_step.h"
#include "bench/data/tokens.h"
#include "bench/train_step.h"
#include "model/presets.h"
#include "tests/support.h"

#include <torch/cuda.h>

#ifdef STEPWISE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#endif

#include <gtest/gtest.h>

namespace stepwise::bench {
namespace {

RunConfig tiny_graph_config(const c10::Device& device) {
  RunConfig c;
  c.model = model::preset("tiny").config;
  c.model.dropout(0.0);  // eager and graph draw dropout masks from different RNG offsets
  c.batch_size = 2;
  c.seq_len = 32;
  c.device = device;
  c.cuda_graph = true;
  return c;
}

TEST(CudaGraphStep, TheReferenceAdamWIsReplacedByCapturableForeach) {
  RunConfig c = tiny_graph_config(c10::kCPU);
  EXPECT_EQ(adamw_kind_for(c), AdamWKind::Foreach);
  EXPECT_TRUE(adamw_options_for(c).capturable());
  TrainState s = make_train_state(c, nullptr);
  EXPECT_EQ(s.optimizer->name(), "foreach_capturable");
  EXPECT_TRUE(s.optimizer->capturable());
  c.adamw_kind = AdamWKind::Fused;
  EXPECT_EQ(adamw_kind_for(c), AdamWKind::Fused);
  c.cuda_graph = false;
  c.adamw_kind = AdamWKind::Reference;
  EXPECT_EQ(adamw_kind_for(c), AdamWKind::Reference);
}

TEST(CudaGraphStep, OnTheCpuItRefusesWithTheReason) {
  RunConfig c = tiny_graph_config(c10::kCPU);
  auto tokens = std::make_shared<const Tokens>(synthetic_tokens(4096, model::kGpt2VocabSize, 1));
  TrainState s = make_train_state(c, tokens);
  try {
    CudaGraphStep step(s);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("requires a CUDA device"), std::string::npos);
  }
}

TEST(CudaGraphStep, TheCapturableOptimizerReadsNoTensorValueOnTheHost) {
  // The meta device has shapes but no data, so any .item() or host copy inside step() would throw there: the
  // property a capture needs. (Modules cannot be moved to meta in LibTorch, so the optimizer is checked alone;
  // the model's forward and backward hold no host reads by construction and are captured on the GPU test.)
  std::vector<at::Tensor> params;
  for (auto shape : std::vector<std::vector<int64_t>>{{16, 8}, {8}})
    params.push_back(at::empty(shape, at::TensorOptions().device(c10::kMeta)).requires_grad_(true));
  auto optimizer = make_adamw(AdamWKind::Foreach, params, AdamWOptions().capturable(true));
  for (int i = 0; i < 2; ++i) {
    for (auto& p : params) p.mutable_grad() = at::empty_like(p);
    EXPECT_NO_THROW(optimizer->step());
    optimizer->zero_grad();
  }
}

std::vector<at::Tensor> parameters_after(int steps, bool graph) {
  RunConfig c = tiny_graph_config(c10::Device(c10::kCUDA, 0));
  c.cuda_graph = graph;
  c.adamw_kind = AdamWKind::Fused;
  auto tokens = std::make_shared<const Tokens>(synthetic_tokens(1 << 16, model::kGpt2VocabSize, 1));
  TrainState s = make_train_state(c, tokens);
  StepFn step = make_step(s, c);
  for (int i = 0; i < steps; ++i) step();
  std::vector<at::Tensor> out;
  for (const auto& p : s.model->parameters()) out.push_back(p.detach().cpu());
  return out;
}

TEST(CudaGraphStep, ReplayedStepsMatchEagerSteps) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "needs a CUDA device (compiled, not run here)";
  // 3 eager warm-up steps, the capture's first replay, then 4 more replays.
  const int steps = CudaGraphStep::kEagerWarmupSteps + 5;
  const auto eager = parameters_after(steps, false), graph = parameters_after(steps, true);
  ASSERT_EQ(eager.size(), graph.size());
  for (size_t i = 0; i < eager.size(); ++i) EXPECT_LT(testing::relative_error(graph[i], eager[i]), 1e-4) << i;
}

TEST(CudaGraphStep, ReplaysDrawFreshDropoutMasks) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "needs a CUDA device (compiled, not run here)";
#ifdef STEPWISE_WITH_CUDA
  // The default generator's Philox offset must advance per replay, or every "step" would reuse one mask.
  auto ones = at::ones({4096}, at::TensorOptions().device(c10::kCUDA));
  at::cuda::CUDAGraph graph;
  at::Tensor out;
  auto side = at::cuda::getStreamFromPool();
  {
    c10::cuda::CUDAStreamGuard guard(side);
    graph.capture_begin();
    out = at::dropout(ones, 0.5, /*train=*/true);
    graph.capture_end();
  }
  graph.replay();
  auto first = out.clone();
  graph.replay();
  EXPECT_FALSE(at::equal(first, out));
#endif
}

}  // namespace
}  // namespace stepwise::bench
