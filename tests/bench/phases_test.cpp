// The step's phase split (bench/phases.h): measured at marks between the phases, not apportioned from the
// step's time. Every comparison is within one run (ratios of medians), never against a wall-clock threshold.
#include "bench/phases.h"

#include "bench/measure/measurement.h"
#include "bench/measure/runner.h"
#include "bench/step/train_state.h"
#include "bench/step/train_step.h"
#include "bench/tokens.h"
#include "model/config.h"
#include "tests/support.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <thread>

namespace stepwise::bench {
namespace {

RunConfig tiny(size_t steps) { return testing::tiny_timed_run(steps, /*warmup=*/2, /*check_every=*/3); }

// An optimizer that is slower by `delay` than the one it wraps, the way a costlier update (Muon's Newton-Schulz) is:
// the extra time lies inside step(), where only a mark after the optimizer can see it.
class SlowOptimizer final : public Optimizer {
 public:
  SlowOptimizer(std::unique_ptr<Optimizer> inner, std::chrono::microseconds delay)
      : inner_(std::move(inner)), delay_(delay) {}
  void step() override {
    inner_->step();
    std::this_thread::sleep_for(delay_);
  }
  void zero_grad() override { inner_->zero_grad(); }
  void set_lr(double lr) override { inner_->set_lr(lr); }
  std::string name() const override { return inner_->name(); }
  int64_t state_bytes() const override { return inner_->state_bytes(); }

 private:
  std::unique_ptr<Optimizer> inner_;
  std::chrono::microseconds delay_;
};

// The measured steps of `config` with the optimizer slowed by `delay` (none: as it comes), as the runner measures them.
RunResult measure(const RunConfig& config, std::chrono::microseconds delay) {
  RunResult result;
  TrainState state = make_train_state(config, testing::gpt2_tokens());
  if (delay.count() > 0) state.optimizer = std::make_unique<SlowOptimizer>(std::move(state.optimizer), delay);
  auto step = make_step(state, config);
  auto ranks = make_ranks(nullptr);
  RunHooks hooks;
  {
    Measurement measurement(config, *step, *ranks, hooks, result);
    measurement.warm_up();
    measurement.measure_steps();
  }
  fill_statistics(config, result);
  return result;
}

// Each marked phase's median over the measured steps, by name.
std::map<std::string, double> medians(const RunResult& r) {
  const auto doc = phases_json(r.phases, r.step_ms->median, r.clock, r.phase_note);
  std::map<std::string, double> out;
  for (const auto& p : doc.at("phases")) out[p.at("name").get<std::string>()] = p.at("median_ms").get<double>();
  return out;
}

TEST(PhaseSplit, EveryMeasuredStepIsSplitInOrderAndAddsUpToTheStep) {
  const auto r = measure(tiny(8), std::chrono::microseconds(0));
  ASSERT_EQ(r.status, "ok") << r.reason.value_or("");
  ASSERT_EQ(r.phases.size(), r.steps.size());
  const auto doc = phases_json(r.phases, r.step_ms->median, r.clock, r.phase_note);
  std::vector<std::string> names;
  for (const auto& p : doc.at("phases")) {
    names.push_back(p.at("name"));
    EXPECT_EQ(p.at("ms").size(), r.steps.size());
  }
  // One process, eager: no gradient exchange, no graph.
  EXPECT_EQ(names, (std::vector<std::string>{"batch", "forward", "backward", "optimizer"}));
  EXPECT_TRUE(doc.at("note").is_null());
  // The marks lie between the step's own start and stop, so no step's phases exceed it; what they leave out is the
  // return after the last mark. On the CPU's one clock the sum is the step within 10% (the tolerance the docs state).
  for (size_t i = 0; i < r.steps.size(); ++i) {
    double sum = 0;
    for (const double ms : r.phases[i])
      if (!std::isnan(ms)) sum += ms;
    EXPECT_LE(sum, r.steps[i].ms * (1 + 1e-9)) << "step " << i;
    EXPECT_GE(sum, 0.9 * r.steps[i].ms) << "step " << i;
  }
  EXPECT_NEAR(doc.at("sum_median_ms").get<double>() / r.step_ms->median, 1.0, 0.1);
}

TEST(PhaseSplit, ASlowerOptimizerShowsInTheOptimizerPhaseAndNowhereElse) {
  const auto config = tiny(6);
  const auto base = measure(config, std::chrono::microseconds(0));
  ASSERT_EQ(base.status, "ok") << base.reason.value_or("");
  // Eight times the whole step: a split apportioned from the step's time would grow the forward and backward
  // ninefold. The two runs are measured one after the other, so a busy machine (ctest's other jobs, a build beside)
  // can slow a phase between them by twice or more; the bound below sits between that and ninefold.
  const auto delay = std::chrono::microseconds(static_cast<int64_t>(8 * 1000 * base.step_ms->median));
  const auto slow = measure(config, delay);
  ASSERT_EQ(slow.status, "ok") << slow.reason.value_or("");
  const auto b = medians(base), s = medians(slow);
  const double delay_ms = static_cast<double>(delay.count()) / 1000;
  // sleep_for sleeps at least the delay; 0.7 of it leaves room for the base optimizer's own noise.
  EXPECT_GE(s.at("optimizer") - b.at("optimizer"), 0.7 * delay_ms)
      << "optimizer " << b.at("optimizer") << " -> " << s.at("optimizer") << " ms, delay " << delay_ms << " ms";
  for (const char* phase : {"forward", "backward"})
    EXPECT_LT(s.at(phase) / b.at(phase), 4.0) << phase << " " << b.at(phase) << " -> " << s.at(phase) << " ms";
  // The step's time saw the delay too: the table's ms/step stays the whole step.
  EXPECT_GE(slow.step_ms->median - base.step_ms->median, 0.7 * delay_ms);
}

TEST(PhaseSplit, TheSectionSummarisesEachPhaseAgainstTheWholeStep) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto step = [&](double batch, double forward, double comm) {
    PhaseTimes t = no_phase_times();
    t[static_cast<size_t>(Phase::Batch)] = batch;
    t[static_cast<size_t>(Phase::Forward)] = forward;
    t[static_cast<size_t>(Phase::Comm)] = comm;
    return t;
  };
  // The third step did not mark comm: it spent no time in it.
  const std::vector<PhaseTimes> steps{step(1, 4, 2), step(3, 6, 4), step(2, 5, nan)};
  const auto j = phases_json(steps, 10.0, "steady_clock", "a note");
  ASSERT_EQ(j.at("phases").size(), 3u);
  EXPECT_EQ(j.at("phases")[0].at("name"), "batch");
  EXPECT_EQ(j.at("phases")[1].at("name"), "forward");
  EXPECT_EQ(j.at("phases")[2].at("name"), "comm");
  EXPECT_DOUBLE_EQ(j.at("phases")[1].at("median_ms").get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(j.at("phases")[1].at("share").get<double>(), 0.5);
  EXPECT_EQ(j.at("phases")[2].at("ms"), (std::vector<double>{2, 4, 0}));
  EXPECT_DOUBLE_EQ(j.at("sum_median_ms").get<double>(), 7.0);  // the sums 7, 13, 7
  EXPECT_DOUBLE_EQ(j.at("step_median_ms").get<double>(), 10.0);
  EXPECT_EQ(j.at("note"), "a note");
  EXPECT_TRUE(phases_json({no_phase_times()}, 10.0, "steady_clock", std::nullopt).is_null());
}

TEST(PhaseSplit, MarksOutsideATimedStepRecordNothing) {
  auto timer = make_step_timer(c10::Device(c10::kCPU));
  timer->mark(Phase::Forward);  // before any step: the activation pass, the probe
  timer->start();
  timer->mark(Phase::Forward);
  timer->stop();
  timer->mark(Phase::Backward);  // after the step
  timer->close_chunk({at::zeros({})});
  const auto reading = timer->read_oldest();
  ASSERT_EQ(reading.phases.size(), 1u);
  EXPECT_FALSE(std::isnan(reading.phases[0][static_cast<size_t>(Phase::Forward)]));
  EXPECT_TRUE(std::isnan(reading.phases[0][static_cast<size_t>(Phase::Backward)]));
}

// A CPU step's process CPU time beside its wall time: a step that waits (as one preempted by other work on the machine
// does) is longer on the clock than in CPU time; one that computes is charged its work.
TEST(StepTimerCpuTime, AStepThatWaitsIsLongerOnTheClockThanInCpuTime) {
  auto timer = make_step_timer(c10::Device(c10::kCPU));
  constexpr auto kWait = std::chrono::milliseconds(30);
  timer->start();
  std::this_thread::sleep_for(kWait);  // waiting costs no CPU time
  timer->stop();
  timer->start();
  const auto a = at::randn({256, 256});
  for (int i = 0; i < 20; ++i) (void)at::mm(a, a);  // computing does
  timer->stop();
  timer->close_chunk({at::zeros({}), at::zeros({})});
  const auto reading = timer->read_oldest();
  ASSERT_EQ(reading.cpu_ms.size(), 2u);
  EXPECT_GE(reading.ms[0], 30.0);
  EXPECT_LT(reading.cpu_ms[0], reading.ms[0] / 2);
  EXPECT_GT(reading.cpu_ms[1], 0.0);
}

}  // namespace
}  // namespace stepwise::bench
