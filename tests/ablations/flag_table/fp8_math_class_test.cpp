// The fp8 flag's math class (ablations/flags/fp8.cpp, ablations/judges/loss_check.cpp): its loss-check tolerance is
// measured here, not guessed. The engine trains the same model on the same batches in float32 (the suite's baseline)
// and with bf16 autocast plus FP8 linears in both of torchao's recipes, on the CPU, where at::_scaled_mm runs the same
// calls as on a GPU (model/fp8_linear.h). Each FP8 curve must pass the fp8 class's check against the float32 one, and
// the printed spread is what the tolerance is a few times of; a curve trained at half the learning rate must not pass,
// so the tolerance is not so wide that it passes anything. Where this CPU's oneDNN runs no FP8 matmul, both are skipped
// with the reason (tests/cpu_fp8.h).
#include "ablations/judges/loss_check.h"
#include "bench/step/train_state.h"
#include "bench/step/train_step.h"
#include "bench/tokens.h"
#include "model/gpt.h"
#include "tests/cpu_fp8.h"
#include "tests/support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

namespace stepwise::ablations {
namespace {

// Long enough for the loss check's windows and a visible drop. On a CPU the FP8 GEMMs run in oneDNN's reference
// matmul, scalar (about 30 ns a multiply-add): the time goes as the tokens a step, so a step is 64 of them (at 256
// the two tests took six minutes of the test command); the small vocabulary puts the head's GEMMs in FP8 too (512 is
// a multiple of 16).
constexpr int kSteps = 40;
constexpr int64_t kBatch = 2, kSeq = 32, kVocab = 512;

bench::RunConfig baseline_run() {
  bench::RunConfig c = testing::tiny_cpu_run();
  c.model.vocab_size(kVocab);
  c.batch_size = kBatch;
  c.seq_len = kSeq;
  c.adamw.lr(2e-3);  // a visible drop within kSteps
  return c;
}

bench::RunConfig fp8_run(model::Fp8Scaling scaling) {
  bench::RunConfig c = baseline_run();
  c.bf16 = true;
  c.bf16_mode = bench::Bf16Mode::Autocast;
  // The tiny preset's GEMMs are all below torchtitan's small-GEMM filter: every layer, so FP8 really runs.
  c.model.fp8(true).fp8_scaling(scaling).fp8_every_layer(true).fp8_head(true);
  return c;
}

std::vector<double> losses(const bench::RunConfig& c) {
  auto tokens = std::make_shared<const bench::Tokens>(bench::synthetic_tokens(1 << 16, kVocab, 1));
  bench::TrainState state = bench::make_train_state(c, tokens);
  const auto step = bench::make_step(state, c);
  std::vector<double> out;
  for (int i = 0; i < kSteps; ++i) out.push_back((*step)().item<double>());
  return out;
}

// The float32 curve both tests hold the others against, trained once.
const std::vector<double>& float32_losses() {
  static const std::vector<double> base = losses(baseline_run());
  return base;
}

TEST(Fp8MathClass, Fp8TrainingStaysWithinTheClassToleranceOfTheFloat32Baseline) {
  if (const auto missing = testing::cpu_fp8_missing()) GTEST_SKIP() << *missing;
  // Every linear runs in FP8, the head included: two blocks of Q, K, V, output, c_fc and c_proj, and lm_head.
  const auto layers = model::GPT(fp8_run(model::Fp8Scaling::Tensorwise).model)->fp8_layers();
  EXPECT_EQ(layers.size(), 2u * 6u + 1u);
  EXPECT_EQ(layers.back(), "lm_head");
  const auto& base = float32_losses();
  auto bf16 = baseline_run();
  bf16.bf16 = true;
  bf16.bf16_mode = bench::Bf16Mode::Autocast;
  const auto bf16_check = check_loss(losses(bf16), std::span<const double>(base), MathClass::Bf16, true);
  std::cout << "bf16 autocast vs fp32: start " << *bf16_check.start_diff << ", end " << *bf16_check.end_diff
            << ", drop " << *bf16_check.drop << " vs " << *bf16_check.baseline_drop << "\n";
  for (const auto scaling : {model::Fp8Scaling::Tensorwise, model::Fp8Scaling::Rowwise}) {
    const auto fp8 = losses(fp8_run(scaling));
    const auto check = check_loss(fp8, std::span<const double>(base), MathClass::Fp8, /*same_batch=*/true);
    // The measured spread the class's tolerance is set from (start and end: relative; drop: ratio - 1).
    std::cout << "fp8 " << model::to_string(scaling) << " vs fp32: start " << *check.start_diff << ", end "
              << *check.end_diff << ", drop " << *check.drop << " vs " << *check.baseline_drop << "\n";
    EXPECT_EQ(check.status, "ok") << check.reason;
    // The class's bounds are bf16's; FP8 must stay far inside them here, or they were set on a wrong measurement.
    const auto bounds = tolerance_for(MathClass::Fp8);
    constexpr double kMargin = 10;
    EXPECT_LT(std::abs(*check.start_diff) * kMargin, bounds.start_rel);
    EXPECT_LT(std::abs(*check.end_diff) * kMargin, bounds.end_rel);
    EXPECT_LT(std::abs(*check.drop / *check.baseline_drop - 1) * kMargin, bounds.drop_ratio);
  }
}

TEST(Fp8MathClass, TheToleranceCatchesACurveThatTrainedDifferently) {
  if (const auto missing = testing::cpu_fp8_missing()) GTEST_SKIP() << *missing;
  const auto& base = float32_losses();
  auto slower = fp8_run(model::Fp8Scaling::Tensorwise);
  slower.adamw.lr(slower.adamw.lr() / 2);
  const auto check = check_loss(losses(slower), std::span<const double>(base), MathClass::Fp8, true);
  EXPECT_EQ(check.status, "math changed") << check.reason;
}

}  // namespace
}  // namespace stepwise::ablations
