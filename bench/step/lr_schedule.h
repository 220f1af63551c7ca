// The learning rate per optimizer step: constant by default (the published tables' runs), or nanoGPT's and llm.c's
// linear warm-up then cosine decay, so a time-to-target run can reproduce their training.
#pragma once

#include <cstdint>
#include <string>

namespace stepwise::bench {

enum class LrScheduleKind {
  Constant,  // the base learning rate at every step
  Cosine,    // linear warm-up to the base rate, then cosine decay to min_ratio x base by decay_steps, then flat
};
std::string to_string(LrScheduleKind k);
// Throws std::invalid_argument naming the valid choices.
LrScheduleKind lr_schedule_kind_from_string(const std::string& s);

struct LrSchedule {
  LrScheduleKind kind = LrScheduleKind::Constant;
  int64_t warmup_steps = 0;  // cosine: steps of linear warm-up
  int64_t decay_steps = 0;   // cosine: the step the decay reaches its floor (0: the run's step cap, filled by resolve)
  double min_ratio = 0.1;    // cosine: the floor as a fraction of the base rate (nanoGPT: lr / 10)

  bool constant() const { return kind == LrScheduleKind::Constant; }
  // The rate for optimizer step `step` (0-based), nanoGPT's get_lr.
  double lr_at(double base_lr, int64_t step) const;
};

}  // namespace stepwise::bench
