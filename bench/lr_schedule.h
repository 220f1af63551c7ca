// The learning rate per optimizer step: constant by default (the published tables' runs), nanoGPT's and llm.c's
// linear warm-up then cosine decay, or the speedrun's trapezoid (warm-up, stable, linear cool-down; record #2 on), so
// a time-to-target run can reproduce their training.
#pragma once

#include "model/enum_names.h"

#include <cstdint>
#include <string>
#include <vector>

namespace stepwise::bench {

enum class LrScheduleKind {
  Constant,   // the base learning rate at every step
  Cosine,     // linear warm-up to the base rate, then cosine decay to min_ratio x base by decay_steps, then flat
  Trapezoid,  // warm-up over W steps, flat at the base rate, then linear down over the last D of N steps to base / D
};
inline constexpr auto kLrScheduleKindNames =
    model::enum_names<LrScheduleKind>("learning-rate schedule", {{LrScheduleKind::Constant, "constant"},
                                                                 {LrScheduleKind::Cosine, "cosine"},
                                                                 {LrScheduleKind::Trapezoid, "trapezoid"}});
std::string to_string(LrScheduleKind k);

// trapezoid's cool-down when cooldown_steps is 0: this fraction of the run's steps, the speedrun's later form (record
// #18: "factor 1 while 1 - s/N >= 0.4, else (1 - s/N) / 0.4").
constexpr double kDefaultCooldownFraction = 0.4;

struct LrSchedule {
  LrScheduleKind kind = LrScheduleKind::Constant;
  int64_t warmup_steps = 0;  // cosine, trapezoid (W): steps of linear warm-up
  // cosine: the step the decay reaches its floor; trapezoid: the run's steps N, whose last, N - 1, is the cool-down's
  // end. 0: the run's step cap, filled by resolve.
  int64_t decay_steps = 0;
  double min_ratio = 0.1;      // cosine: the floor as a fraction of the base rate (nanoGPT: lr / 10)
  int64_t cooldown_steps = 0;  // trapezoid: D; 0 = cooldown_fraction x N
  double cooldown_fraction = kDefaultCooldownFraction;  // trapezoid: D / N when cooldown_steps is 0

  bool constant() const { return kind == LrScheduleKind::Constant; }
  // The rate for optimizer step `step` (0-based): nanoGPT's get_lr (cosine), or the trapezoid's base x f(step).
  double lr_at(double base_lr, int64_t step) const;
  // trapezoid's D: cooldown_steps, else cooldown_fraction x N rounded, at least 1 and at most N.
  int64_t cooldown() const;
  // trapezoid's factor f(s) at step s of N (arXiv 2405.18392's warm-up-stable-decay, the speedrun's record #2):
  //   (s + 1) / W for s < W;  1 for s < N - D;  (N - s) / D after, which ends at f(N - 1) = 1 / D, not 0;
  // the last value 1 / D past N (a run that steps beyond its cap).
  double trapezoid_factor(int64_t step) const;
  // One line for a person: "cosine: warm-up 20 steps, decay to 0.10 x lr by step 400".
  std::string describe() const;
};

}  // namespace stepwise::bench
