// The learning-rate schedule: constant by default; warm-up, cosine decay and the floor as nanoGPT's get_lr computes
// them; and the optimizer step applies it.
#include "bench/step/lr_schedule.h"
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
    lr_schedule_kind_from_string("linear");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("constant, cosine"), std::string::npos);
  }
}

}  // namespace
}  // namespace stepwise::bench
