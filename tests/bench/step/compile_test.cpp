// The compile flag's CUDA-graph step (bench/step/compile.h). On a GPU: K replayed steps give the parameters of K
// eager steps, every replay of stepwise's own step draws fresh dropout masks, checkpoint's recompute inside the
// capture draws its forward's masks, and the optimizer is the configured one.
// On the CPU: the refusal with its reason, and that compile keeps the configured optimizer.
#include "bench/step/compile.h"
#include "bench/step/train_step.h"
#include "bench/tokens.h"
#include "model/config.h"
#include "tests/support.h"

#include <torch/cuda.h>

#include <gtest/gtest.h>

#include <set>

namespace stepwise::bench {
namespace {

RunConfig tiny_graph_config(const c10::Device& device) {
  RunConfig c;
  c.model = model::preset("tiny").config;
  c.model.dropout(0.0);  // eager and graph draw dropout masks from different RNG offsets
  c.batch_size = 2;
  c.seq_len = 32;
  c.device = device;
  c.compile = true;
  return c;
}

TEST(CudaGraphStep, CompileKeepsTheConfiguredOptimizer) {
  // The graph holds forward and backward only; the optimizer steps eagerly after each replay, as beside
  // torch.compile(model), so the compile row of a suite changes nothing else.
  for (const auto kind : {AdamWKind::Reference, AdamWKind::Foreach, AdamWKind::Fused}) {
    RunConfig c = tiny_graph_config(c10::kCPU);
    c.adamw_baseline = kind;
    EXPECT_EQ(make_train_state(c, nullptr).optimizer->name(), to_string(kind));
  }
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

std::vector<at::Tensor> parameters_after(int steps, bool graph, AdamWKind kind, double dropout = 0.0,
                                         bool checkpoint = false) {
  RunConfig c = tiny_graph_config(c10::Device(c10::kCUDA, 0));
  c.compile = graph;
  c.adamw_baseline = kind;
  c.model.dropout(dropout);
  c.model.checkpoint(checkpoint);
  auto tokens = std::make_shared<const Tokens>(synthetic_tokens(1 << 16, model::kGpt2VocabSize, 1));
  TrainState s = make_train_state(c, tokens);
  const auto step = make_step(s, c);
  for (int i = 0; i < steps; ++i) (*step)();
  std::vector<at::Tensor> out;
  for (const auto& p : s.model->parameters()) out.push_back(p.detach().cpu());
  return out;
}

TEST(CudaGraphStep, ReplayedStepsMatchEagerSteps) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "needs a CUDA device (compiled, not run here)";
  // 3 eager warm-up steps, the capture's first replay, then 4 more replays; every optimizer, stepping eagerly on
  // the gradients the replays write in place.
  const int steps = CudaGraphStep::kEagerWarmupSteps + 5;
  for (const auto kind : {AdamWKind::Reference, AdamWKind::Foreach, AdamWKind::Fused}) {
    const auto eager = parameters_after(steps, false, kind), graph = parameters_after(steps, true, kind);
    ASSERT_EQ(eager.size(), graph.size());
    for (size_t i = 0; i < eager.size(); ++i)
      EXPECT_LT(testing::relative_error(graph[i], eager[i]), 1e-4) << to_string(kind) << " parameter " << i;
  }
}

TEST(CudaGraphStep, CheckpointWithDropoutRecomputesTheCapturedMasks) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "needs a CUDA device (compiled, not run here)";
  // Full checkpointing inside the capture: each block's recompute must draw the masks its captured forward drew, and
  // leave the live generator where the backward found it (model/generator_states.h). Then the captured step draws
  // the same numbers as the captured step without checkpoint, replay after replay, and trains the same weights; a
  // recompute with other masks gives other gradients, and one that moved the generator shifts every later mask.
  const int steps = CudaGraphStep::kEagerWarmupSteps + 5;
  const auto kept = parameters_after(steps, true, AdamWKind::Foreach, 0.1, false);
  const auto recomputed = parameters_after(steps, true, AdamWKind::Foreach, 0.1, true);
  ASSERT_EQ(kept.size(), recomputed.size());
  for (size_t i = 0; i < kept.size(); ++i)
    EXPECT_LT(testing::relative_error(recomputed[i], kept[i]), 1e-4) << "parameter " << i;
}

// Losses of stepwise's CudaGraphStep on one repeated batch with the parameters frozen (lr 0): they can differ only
// through dropout, so with dropout on, a replay that reused its mask would repeat the loss.
std::vector<double> replayed_losses_on_a_fixed_batch(double dropout) {
  RunConfig c = tiny_graph_config(c10::Device(c10::kCUDA, 0));
  c.model.dropout(dropout);
  c.adamw.lr(0.0);
  auto tokens = std::make_shared<const Tokens>(Tokens(1 << 14, 7));  // every window, so every batch, is the same
  TrainState s = make_train_state(c, tokens);
  const auto step = make_step(s, c);
  std::vector<double> losses;
  for (int i = 0; i < CudaGraphStep::kEagerWarmupSteps + 4; ++i) {
    const double loss = (*step)().item<double>();
    if (i > CudaGraphStep::kEagerWarmupSteps) losses.push_back(loss);  // replays after the capture's own
  }
  return losses;
}

TEST(CudaGraphStep, EveryReplayDrawsFreshDropoutMasks) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "needs a CUDA device (compiled, not run here)";
  const auto without = replayed_losses_on_a_fixed_batch(0.0);
  EXPECT_EQ(std::set<double>(without.begin(), without.end()).size(), 1u) << "control: no dropout, one loss";
  const auto with = replayed_losses_on_a_fixed_batch(0.5);
  EXPECT_EQ(std::set<double>(with.begin(), with.end()).size(), with.size()) << "a replay reused a dropout mask";
}

}  // namespace
}  // namespace stepwise::bench
