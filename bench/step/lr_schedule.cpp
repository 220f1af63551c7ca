// LrSchedule::lr_at: nanoGPT's get_lr (train.py), warm-up then cosine decay to a floor.
#include "bench/step/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace stepwise::bench {

std::string to_string(LrScheduleKind k) { return k == LrScheduleKind::Constant ? "constant" : "cosine"; }

LrScheduleKind lr_schedule_kind_from_string(const std::string& s) {
  if (s == "constant") return LrScheduleKind::Constant;
  if (s == "cosine") return LrScheduleKind::Cosine;
  throw std::invalid_argument("unknown learning-rate schedule '" + s + "' (valid: constant, cosine)");
}

double LrSchedule::lr_at(double base_lr, int64_t step) const {
  if (constant()) return base_lr;
  if (step < warmup_steps) return base_lr * static_cast<double>(step + 1) / static_cast<double>(warmup_steps + 1);
  const double min_lr = base_lr * min_ratio;
  if (step >= decay_steps || decay_steps <= warmup_steps) return min_lr;
  const double ratio = static_cast<double>(step - warmup_steps) / static_cast<double>(decay_steps - warmup_steps);
  const double coefficient = 0.5 * (1.0 + std::cos(std::numbers::pi * std::clamp(ratio, 0.0, 1.0)));
  return min_lr + coefficient * (base_lr - min_lr);
}

}  // namespace stepwise::bench
