// run_configuration end to end on a tiny model: the protocol, the summary, and each way a run can fail.
#include "bench/measure/runner.h"

#include "bench/tokens.h"
#include "bench/trace/op_counts.h"
#include "model/config.h"
#include "tests/cpu_fp8.h"
#include "tests/support.h"

#include <gtest/gtest.h>

#include <cmath>

namespace stepwise::bench {
namespace {

RunConfig tiny(size_t steps = 4) { return testing::tiny_timed_run(steps, /*warmup=*/1, /*check_every=*/2); }

TEST(Runner, MeasuresTheRequestedStepsAfterWarmup) {
  const auto r = run_configuration(tiny(4), testing::gpt2_tokens());
  ASSERT_EQ(r.status, "ok") << r.reason.value_or("");
  EXPECT_EQ(r.warmup.size(), 1u);
  EXPECT_EQ(r.steps.size(), 4u);
  EXPECT_EQ(r.stop_reason, "max_steps");
  ASSERT_TRUE(r.step_ms);
  EXPECT_GT(r.step_ms->median, 0);
  EXPECT_NEAR(r.tokens_per_s, 2 * 32 / (r.step_ms->median / 1000), 1e-6);
  ASSERT_TRUE(r.memory);
  EXPECT_GT(*r.memory->peak_reserved_bytes, 0);
  ASSERT_TRUE(r.mfu);
  EXPECT_EQ(r.optimizer, "forloop");  // torch.optim.AdamW()'s default on a CPU
  for (const auto& s : r.steps) EXPECT_TRUE(std::isfinite(s.loss));
}

// --count-ops starts the profiler before a configuration's first step, and so before any CUDA graph is captured
// (compile captures inside a step; PyTorch's issue 75504): a counted configuration that fails at its very first step
// has prepared it already, and one that counts nothing never starts it.
TEST(Runner, CountedConfigurationPreparesTheProfilerBeforeItsFirstStep) {
  auto c = tiny();
  c.timing.warmup = 0;
  RunHooks hooks;
  hooks.fail_before_step = 0;  // the first call of the step throws
  int64_t before = profiler_preparations();
  auto r = run_configuration(c, testing::gpt2_tokens(), hooks);
  ASSERT_EQ(r.status, "failed");
  EXPECT_EQ(profiler_preparations(), before) << "a configuration that counts nothing started the profiler";
  c.count_steps = 1;
  before = profiler_preparations();
  r = run_configuration(c, testing::gpt2_tokens(), hooks);
  ASSERT_EQ(r.status, "failed");
  ASSERT_TRUE(r.reason);
  EXPECT_NE(r.reason->find("injected failure"), std::string::npos) << *r.reason;
  EXPECT_EQ(profiler_preparations(), before + 1) << "the profiler was not started before the first step";
}

TEST(Runner, SameSeedGivesTheSameLossCurve) {
  const auto a = run_configuration(tiny(), testing::gpt2_tokens()),
             b = run_configuration(tiny(), testing::gpt2_tokens());
  EXPECT_EQ(losses(a), losses(b));
}

TEST(Runner, LossFallsOnTheSyntheticData) {
  auto c = tiny(30);
  c.adamw.lr(3e-3);
  const auto r = run_configuration(c, testing::gpt2_tokens());
  ASSERT_EQ(r.status, "ok");
  EXPECT_LT(r.steps.back().loss, r.warmup.front().loss - 0.5);
}

TEST(Runner, NonFiniteLossFailsTheRunAndKeepsTheSteps) {
  auto c = tiny(6);
  c.adamw.lr(1e30);
  const auto r = run_configuration(c, testing::gpt2_tokens());
  EXPECT_EQ(r.status, "failed");
  ASSERT_TRUE(r.reason);
  EXPECT_NE(r.reason->find("loss is"), std::string::npos) << *r.reason;
}

TEST(Runner, InterruptionStopsAtAStepBoundary) {
  std::atomic<bool> stop{true};
  RunHooks hooks;
  hooks.interrupted = &stop;
  const auto r = run_configuration(tiny(), testing::gpt2_tokens(), hooks);
  EXPECT_EQ(r.status, "failed");
  EXPECT_EQ(r.stop_reason, "interrupted");
  ASSERT_TRUE(r.reason);
  EXPECT_NE(r.reason->find("interrupted"), std::string::npos);
}

// A model whose token embedding alone needs 2^20 * 50257 * 4 bytes = 211 GB: the allocator refuses it at once,
// as a GPU's would refuse a model too large for it.
RunConfig too_big() {
  auto c = tiny();
  c.model.n_embd(int64_t{1} << 20).n_head(1);
  return c;
}

TEST(Runner, OutOfMemoryIsRecordedNotThrown) {
  const auto r = run_configuration(too_big(), testing::gpt2_tokens());
  EXPECT_EQ(r.status, "failed");
  ASSERT_TRUE(r.reason);
  EXPECT_EQ(r.reason->rfind("out of memory", 0), 0u) << *r.reason;
}

TEST(Runner, MaxBatchThatCannotFitEvenTheBaseBatchFails) {
  auto c = too_big();
  c.max_batch = true;
  const auto r = run_configuration(c, testing::gpt2_tokens());
  EXPECT_EQ(r.status, "failed");
  ASSERT_TRUE(r.reason);
  // On a CPU the estimate refuses it before the probe allocates anything; a GPU's allocator refuses it in the probe
  // ("even the base batch 2 does not fit").
  EXPECT_NE(r.reason->find("batch 2"), std::string::npos) << *r.reason;
  EXPECT_EQ(r.reason->rfind("out of memory", 0), 0u) << *r.reason;
}

TEST(Runner, TooLittleDataForOneBatchFailsWithTheReason) {
  const auto r = run_configuration(tiny(), std::make_shared<const Tokens>(Tokens(40)));  // one window of 33
  EXPECT_EQ(r.status, "failed");
  ASSERT_TRUE(r.reason);
  EXPECT_NE(r.reason->find("fewer than one batch"), std::string::npos) << *r.reason;
}

TEST(Runner, MaxBatchProbesPowersOfTwoUpToTheLimit) {
  auto c = tiny(2);
  c.batch_size = 3;
  c.max_batch = true;
  c.max_batch_limit = 16;
  const auto r = run_configuration(c, testing::gpt2_tokens());
  ASSERT_EQ(r.status, "ok") << r.reason.value_or("");
  ASSERT_TRUE(r.probe);
  std::vector<int64_t> tried;
  for (const auto& t : r.probe->tried) tried.push_back(t.batch);
  EXPECT_EQ(tried, (std::vector<int64_t>{3, 4, 8, 16}));
  EXPECT_EQ(r.probe->chosen, 16);
  EXPECT_EQ(r.batch_size, 16);
}

TEST(Runner, PrecisionForMfuFollowsWhatIsInEffect) {
  auto c = tiny();
  EXPECT_EQ(c.precision(), "fp32");
  c.tf32 = true;
  EXPECT_EQ(c.precision(), c.device.is_cuda() ? "tf32" : "fp32");
  c.bf16 = true;
  EXPECT_EQ(c.precision(), "bf16");
  c.model.fp8(true);
  EXPECT_EQ(c.precision(), "fp8");
}

TEST(Runner, AnFp8RunListsTheLayersThatRanInFp8) {
  // The engine's FP8 path runs on the CPU too (at::_scaled_mm, model/fp8_linear.h); the flag itself is a planned skip
  // there, so this is where the result's fp8_layers is checked without a GPU.
  auto c = tiny(2);
  c.bf16 = true;
  c.bf16_mode = Bf16Mode::Autocast;
  c.model.fp8(true);
  const auto filtered = run_configuration(c, testing::gpt2_tokens());
  ASSERT_EQ(filtered.status, "ok") << filtered.reason.value_or("");
  ASSERT_TRUE(filtered.fp8_layers);
  EXPECT_TRUE(filtered.fp8_layers->empty()) << "torchtitan's filter keeps every GEMM of a width-64 model in bf16";
  EXPECT_DOUBLE_EQ(filtered.fp8_flops_per_token.value_or(-1), 0.0);
  EXPECT_FALSE(run_configuration(tiny(2), testing::gpt2_tokens()).fp8_layers) << "no fp8: no list";
  // Every layer in FP8 needs this CPU's oneDNN to run FP8 matmuls (tests/cpu_fp8.h).
  if (const auto missing = testing::cpu_fp8_missing()) GTEST_SKIP() << *missing;
  c.model.fp8_every_layer(true);
  const auto every = run_configuration(c, testing::gpt2_tokens());
  ASSERT_EQ(every.status, "ok") << every.reason.value_or("");
  ASSERT_TRUE(every.fp8_layers);
  // Two blocks of attention (Q, K, V, output) and MLP (c_fc, c_proj) linears; the head's 50257 is no multiple of 16.
  EXPECT_EQ(every.fp8_layers->size(), 2u * 6u);
  // Their FLOPs, which MFU counts at FP8's peak: 6 per weight and token, the whole model's but the head and attention.
  const auto& m = c.model;
  const double block_weights = 4.0 * m.n_embd() * m.n_embd() + 8.0 * m.n_embd() * m.n_embd();
  EXPECT_DOUBLE_EQ(every.fp8_flops_per_token.value_or(-1), 6.0 * m.n_layer() * block_weights);
}

}  // namespace
}  // namespace stepwise::bench
