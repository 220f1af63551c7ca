// Training to a target loss: the target reached at an evaluation, the clock only around training steps, the warm-up
// undone (a run with warm-up gives the curve of a run without), seeds reproducible, caps and bad data reported; a
// step budget trains on past the target to an evaluation exactly at the budget, which a re-run reproduces.
#include "bench/measure/convergence.h"
#include "bench/tokens.h"
#include "tests/support.h"

#include <gtest/gtest.h>

#include <numeric>

namespace stepwise::bench {
namespace {

using testing::Streams;

Streams synthetic(const RunConfig& c) { return testing::synthetic_streams(c); }

RunConfig config() {
  auto c = testing::tiny_cpu_run();
  c.model.dropout(0.1);  // on: the warm-up's undoing must restore dropout's stream too
  c.adamw.lr(3e-3);
  return c;
}

TargetOptions options(double target) {
  TargetOptions o;
  o.loss = target;
  o.eval_every = 5;
  o.eval_batches = 2;
  o.max_steps = 200;
  o.max_time_s = 600;
  o.warmup_steps = 2;
  return o;
}

std::vector<double> val_losses(const SeedRun& run) {
  std::vector<double> out;
  for (const auto& p : run.curve) out.push_back(p.val_loss);
  return out;
}

TEST(Convergence, ReachesTheTargetAtAnEvaluationWithTheClockOnlyAroundSteps) {
  const auto c = config();
  const auto data = synthetic(c);
  const auto run = train_to_target(c, data.train, data.val, options(9.5));
  ASSERT_EQ(run.status, "ok") << run.reason.value_or("");
  ASSERT_TRUE(run.reached) << run.stop_reason;
  EXPECT_EQ(run.stop_reason, "target");
  EXPECT_EQ(*run.steps % 5, 0);
  EXPECT_EQ(*run.tokens, *run.steps * c.batch_size * c.seq_len);
  EXPECT_EQ(run.curve.front().step, 0);
  EXPECT_LE(run.curve.back().val_loss, 9.5);
  EXPECT_GT(run.curve[run.curve.size() - 2].val_loss, 9.5) << "the first evaluation at or below the target stops it";
  EXPECT_EQ(run.step_ms.size(), static_cast<size_t>(*run.steps));
  EXPECT_NEAR(*run.time_s, std::accumulate(run.step_ms.begin(), run.step_ms.end(), 0.0) / 1000, 1e-9);
  EXPECT_GT(run.eval_s, 0);
  EXPECT_GT(run.warmup_s, 0);
}

TEST(Convergence, TheWarmUpIsUndoneAndASeedIsReproducible) {
  const auto c = config();
  const auto data = synthetic(c);
  auto without = options(9.5), with = options(9.5);
  without.warmup_steps = 0;
  with.warmup_steps = 3;
  const auto a = train_to_target(c, data.train, data.val, without);
  const auto b = train_to_target(c, data.train, data.val, with);
  const auto again = train_to_target(c, data.train, data.val, with);
  ASSERT_EQ(a.status, "ok");
  EXPECT_EQ(val_losses(a), val_losses(b)) << "weights, optimizer state, data order and dropout all restored";
  EXPECT_EQ(val_losses(b), val_losses(again));
  auto other = c;
  other.seed = c.seed + 1;
  EXPECT_NE(val_losses(train_to_target(other, data.train, data.val, with)), val_losses(b));
}

// The undo builds the configuration's own optimizer afresh: with muon, Muon again. (An AdamW in its place, the undo
// running whatever the warm-up, would turn the muon run into the plain AdamW run: the last check.)
TEST(Convergence, TheWarmUpIsUndoneWithMuonToo) {
  auto c = config();
  c.muon = true;
  const auto data = synthetic(c);
  auto without = options(9.5), with = options(9.5);
  without.warmup_steps = 0;
  with.warmup_steps = 3;
  const auto a = train_to_target(c, data.train, data.val, without);
  const auto b = train_to_target(c, data.train, data.val, with);
  ASSERT_EQ(a.status, "ok");
  EXPECT_EQ(val_losses(a), val_losses(b));
  const auto adamw = train_to_target(config(), data.train, data.val, with);
  EXPECT_NE(val_losses(b), val_losses(adamw)) << "Muon trains another function than AdamW alone";
}

TEST(Convergence, AnUnreachableTargetStopsAtTheStepCap) {
  const auto c = config();
  const auto data = synthetic(c);
  auto o = options(0.0);
  o.max_steps = 12;
  const auto run = train_to_target(c, data.train, data.val, o);
  EXPECT_EQ(run.status, "ok");
  EXPECT_FALSE(run.reached);
  EXPECT_EQ(run.stop_reason, "max_steps");
  EXPECT_FALSE(run.steps.has_value());
  EXPECT_EQ(run.curve.back().step, 12);  // evaluated at the cap too
}

TEST(Convergence, TooLittleValidationDataFailsWithTheReason) {
  const auto c = config();
  const auto data = synthetic(c);
  const auto tiny = std::make_shared<const Tokens>(
      data.val->begin(), data.val->begin() + 20);  // one window of 17 tokens, not a batch of 2
  const auto run = train_to_target(c, data.train, tiny, options(9.5));
  EXPECT_EQ(run.status, "failed");
  EXPECT_NE(run.reason->find("fewer than one batch"), std::string::npos) << *run.reason;
}

// The declared horizon (--step-budget): a seed trains on past the target and is evaluated exactly at the budget, off
// the grid of K; the time to target is still the first crossing.
TEST(Convergence, AStepBudgetTrainsOnPastTheTargetToAnEvaluationExactlyThere) {
  const auto c = config();
  const auto data = synthetic(c);
  const auto plain = train_to_target(c, data.train, data.val, options(9.5));
  ASSERT_TRUE(plain.reached) << plain.stop_reason;
  auto budgeted = options(9.5);
  budgeted.step_budget = *plain.steps + 8;  // off the grid of 5
  const auto run = train_to_target(c, data.train, data.val, budgeted);
  ASSERT_TRUE(run.reached);
  EXPECT_EQ(*run.steps, *plain.steps) << "the first crossing, on the same grid";
  EXPECT_EQ(run.stop_reason, "target");
  EXPECT_EQ(run.curve.back().step, *budgeted.step_budget);
  EXPECT_EQ(run.step_ms.size(), static_cast<size_t>(*budgeted.step_budget));
  EXPECT_EQ(run.curve[run.curve.size() - 2].step % 5, 0) << "the grid of K kept up to the budget";
  for (size_t i = 0; i < plain.curve.size(); ++i) EXPECT_EQ(run.curve[i].val_loss, plain.curve[i].val_loss);
}

// A seed that has not crossed the target by the horizon stops there, censored: it trained all N steps, as a record
// does, and the step cap beyond never comes into it.
TEST(Convergence, ASeedThatHasNotCrossedByTheBudgetStopsThereCensored) {
  const auto c = config();
  const auto data = synthetic(c);
  const auto plain = train_to_target(c, data.train, data.val, options(9.5));
  ASSERT_TRUE(plain.reached);
  ASSERT_GT(*plain.steps, 5);
  auto budgeted = options(9.5);
  budgeted.step_budget = 3;
  const auto run = train_to_target(c, data.train, data.val, budgeted);
  EXPECT_EQ(run.status, "ok");
  EXPECT_FALSE(run.reached);
  EXPECT_FALSE(run.steps.has_value());
  EXPECT_EQ(run.stop_reason, "step_budget");
  ASSERT_EQ(run.curve.size(), 2u);
  EXPECT_EQ(run.curve.back().step, 3) << "evaluated at the budget, and no step after it";
  EXPECT_EQ(run.step_ms.size(), 3u);
}

}  // namespace
}  // namespace stepwise::bench
