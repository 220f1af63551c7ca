// LrSchedule::lr_at: nanoGPT's get_lr (train.py), warm-up then cosine decay to a floor; and the trapezoid's factor.
#include "bench/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <stdexcept>

namespace stepwise::bench {

std::string to_string(LrScheduleKind k) { return kLrScheduleKindNames.to_string(k); }

std::string LrSchedule::describe() const {
  const auto ratio = [](double r) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.2f", r);
    return std::string(buf);
  };
  switch (kind) {
    case LrScheduleKind::Constant: return "constant";
    case LrScheduleKind::Cosine:
      return "cosine: warm-up " + std::to_string(warmup_steps) + " steps, decay to " + ratio(min_ratio) +
             " x lr by step " + std::to_string(decay_steps);
    case LrScheduleKind::Trapezoid:
      return "trapezoid: warm-up " + std::to_string(warmup_steps) + " steps, flat, linear cool-down over the last " +
             std::to_string(cooldown()) + " of " + std::to_string(decay_steps) + " steps";
  }
  return "?";
}

int64_t LrSchedule::cooldown() const {
  const int64_t N = std::max<int64_t>(decay_steps, 1);
  const int64_t D = cooldown_steps > 0 ? cooldown_steps
                                       : static_cast<int64_t>(std::llround(cooldown_fraction * static_cast<double>(N)));
  return std::clamp<int64_t>(D, 1, N);
}

double LrSchedule::trapezoid_factor(int64_t step) const {
  const int64_t N = decay_steps, D = cooldown();
  if (step < warmup_steps) return static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
  if (step < N - D) return 1.0;
  return static_cast<double>(std::max<int64_t>(N - step, 1)) / static_cast<double>(D);
}

double LrSchedule::lr_at(double base_lr, int64_t step) const {
  if (constant()) return base_lr;
  if (kind == LrScheduleKind::Trapezoid) return base_lr * trapezoid_factor(step);
  if (step < warmup_steps) return base_lr * static_cast<double>(step + 1) / static_cast<double>(warmup_steps + 1);
  const double min_lr = base_lr * min_ratio;
  if (step >= decay_steps || decay_steps <= warmup_steps) return min_lr;
  const double ratio = static_cast<double>(step - warmup_steps) / static_cast<double>(decay_steps - warmup_steps);
  const double coefficient = 0.5 * (1.0 + std::cos(std::numbers::pi * std::clamp(ratio, 0.0, 1.0)));
  return min_lr + coefficient * (base_lr - min_lr);
}

}  // namespace stepwise::bench
