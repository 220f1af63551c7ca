// The learning-rate schedule: constant by default; warm-up, cosine decay and the floor as nanoGPT's get_lr computes
// them; the trapezoid's shape from the spec (T1 (d)); and the optimizer step applies it, to Muon's group too.
#include "bench/lr_schedule.h"
#include "bench/optim/muon.h"
#include "bench/step/train_state.h"
#include "tests/support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace stepwise::bench {
namespace {

TEST(LrSchedule, ConstantIsTheBaseRateAtEveryStep) {
  const LrSchedule constant;
  for (int64_t step : {0, 1, 1000}) EXPECT_DOUBLE_EQ(constant.lr_at(6e-4, step), 6e-4);
}

TEST(LrSchedule, CosineWarmsUpLinearlyDecaysToItsFloorAndStaysThere) {
  const LrSchedule s{LrScheduleKind::Cosine, /*warmup_steps=*/10, /*decay_steps=*/110, /*min_ratio=*/0.1};
  const double lr = 6e-4, min_lr = 6e-5;
  EXPECT_DOUBLE_EQ(s.lr_at(lr, 0), lr * 1 / 11);  // nanoGPT: lr * (it + 1) / (warmup + 1)
  EXPECT_DOUBLE_EQ(s.lr_at(lr, 9), lr * 10 / 11);
  EXPECT_DOUBLE_EQ(s.lr_at(lr, 10), lr);                              // the decay starts at the base rate
  EXPECT_NEAR(s.lr_at(lr, 60), min_lr + 0.5 * (lr - min_lr), 1e-15);  // half way: cos(pi / 2) = 0
  EXPECT_NEAR(s.lr_at(lr, 35), min_lr + 0.5 * (1 + std::cos(std::numbers::pi / 4)) * (lr - min_lr), 1e-15);
  EXPECT_DOUBLE_EQ(s.lr_at(lr, 110), min_lr);
  EXPECT_DOUBLE_EQ(s.lr_at(lr, 5000), min_lr);
}

TEST(LrSchedule, TheOptimizerStepAppliesTheScheduleStepByStep) {
  auto c = testing::tiny_cpu_run();
  c.lr_schedule = {LrScheduleKind::Cosine, 2, 4, 0.0};
  c.adamw.lr(1e-3).weight_decay(0);
  TrainState state = make_train_state(c, nullptr);
  // A zero learning rate leaves the weights as they were: step 4 is at the floor, 0 here.
  for (auto& p : state.model->parameters()) p.mutable_grad() = at::ones_like(p);
  state.optimizer_steps = 4;
  const auto before = state.model->parameters()[0].clone();
  optimizer_step(state);
  EXPECT_TRUE(at::equal(before, state.model->parameters()[0]));
  EXPECT_EQ(state.optimizer_steps, 5);
  // Step 0 of warm-up moves them.
  for (auto& p : state.model->parameters()) p.mutable_grad() = at::ones_like(p);
  state.optimizer_steps = 0;
  optimizer_step(state);
  EXPECT_FALSE(at::equal(before, state.model->parameters()[0]));
}

TEST(LrSchedule, UnknownKindNamesTheValidOnes) {
  try {
    kLrScheduleKindNames.from_string("linear");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("constant, cosine, trapezoid"), std::string::npos);
  }
  for (const auto& name : kLrScheduleKindNames.names())
    EXPECT_EQ(to_string(kLrScheduleKindNames.from_string(name)), name);
}

LrSchedule trapezoid(int64_t W, int64_t N, int64_t D) {
  LrSchedule s;
  s.kind = LrScheduleKind::Trapezoid;
  s.warmup_steps = W;
  s.decay_steps = N;
  s.cooldown_steps = D;
  return s;
}

// The spec's T1 (d): f(0) = 1/W, f(W-1) = 1, flat through N-D, linear down to f(N-1) = 1/D, never increasing after W.
TEST(LrSchedule, TrapezoidWarmsUpStaysFlatAndCoolsDownToOneOverD) {
  const auto s = trapezoid(/*W=*/8, /*N=*/100, /*D=*/20);
  EXPECT_DOUBLE_EQ(s.trapezoid_factor(0), 1.0 / 8);
  EXPECT_DOUBLE_EQ(s.trapezoid_factor(3), 4.0 / 8);
  EXPECT_DOUBLE_EQ(s.trapezoid_factor(7), 1.0);
  for (int64_t step = 8; step <= 80; ++step) EXPECT_EQ(s.trapezoid_factor(step), 1.0) << step;
  EXPECT_DOUBLE_EQ(s.trapezoid_factor(81), 19.0 / 20);
  EXPECT_DOUBLE_EQ(s.trapezoid_factor(90), 10.0 / 20);
  EXPECT_DOUBLE_EQ(s.trapezoid_factor(99), 1.0 / 20);
  EXPECT_DOUBLE_EQ(s.trapezoid_factor(250), 1.0 / 20) << "past N it keeps its last value";
  for (int64_t step = 8; step < 120; ++step) EXPECT_LE(s.trapezoid_factor(step + 1), s.trapezoid_factor(step)) << step;
  for (int64_t step = 0; step < 100; ++step) EXPECT_DOUBLE_EQ(s.lr_at(0.02, step), 0.02 * s.trapezoid_factor(step));
  // The speedrun's #2 and #4 shapes: W = 256, D = 2048, N = 9536; and no warm-up (W = 0) starts at the base rate.
  EXPECT_DOUBLE_EQ(trapezoid(256, 9536, 2048).trapezoid_factor(9535), 1.0 / 2048);
  EXPECT_DOUBLE_EQ(trapezoid(0, 6200, 1800).trapezoid_factor(0), 1.0);
}

TEST(LrSchedule, TrapezoidsCooldownIsAFractionOfTheRunUnlessGiven) {
  auto s = trapezoid(0, 1000, 0);
  EXPECT_EQ(s.cooldown(), 400) << "the speedrun's later cooldown fraction, 0.4";
  s.cooldown_fraction = 0.25;
  EXPECT_EQ(s.cooldown(), 250);
  s.decay_steps = 7;
  EXPECT_EQ(s.cooldown(), 2) << "0.25 x 7 = 1.75 rounds to 2";
  s.cooldown_fraction = 0;
  EXPECT_EQ(s.cooldown(), 1) << "at least one step, whose factor is 1";
  s.cooldown_steps = 50;
  EXPECT_EQ(s.cooldown(), 7) << "at most the run";
}

// With muon, the schedule's factor reaches both groups: at the trapezoid's last step the Muon group moves its
// matrices by 1/D of what a constant rate would.
TEST(LrSchedule, TheOptimizerStepScalesMuonsGroupToo) {
  const auto moved = [](LrScheduleKind kind) {
    auto c = testing::tiny_cpu_run();
    c.muon = true;
    c.muon_options.ns_dtype(MuonNsDtype::Float32);
    c.lr_schedule = trapezoid(0, 10, 4);
    c.lr_schedule.kind = kind;
    TrainState state = make_train_state(c, nullptr);
    for (auto& p : state.model->parameters()) p.mutable_grad() = at::ones_like(p).mul_(0.01);
    state.optimizer_steps = 9;
    const auto w = state.model->named_parameters()["h.0.mlp.c_fc.weight"];
    const auto before = w.clone();
    optimizer_step(state);
    return (w - before).norm().item<double>();
  };
  // Within float32's rounding of the updated weights (about 1e-8 of weights near 0.1, on moves near 1e-3 and 4e-3).
  EXPECT_NEAR(moved(LrScheduleKind::Trapezoid) / moved(LrScheduleKind::Constant), 0.25, 1e-4);
}

}  // namespace
}  // namespace stepwise::bench
