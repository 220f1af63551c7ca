// The loss check: every configuration of a suite starts from the same weights and sees the same batches, so its
// loss curve can be held against the baseline's; a switch that changes the math shows here.
#include "ablations/loss_check.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace stepwise::ablations {

namespace {

std::optional<double> mean_of(std::span<const double> v, size_t begin, size_t end) {
  if (end <= begin) return std::nullopt;
  const double m = std::accumulate(v.begin() + static_cast<long>(begin), v.begin() + static_cast<long>(end), 0.0) /
                   static_cast<double>(end - begin);
  return std::isfinite(m) ? std::optional(m) : std::nullopt;
}

void set_window(LossCheck& c, size_t n, size_t window) {
  c.window_end = n;
  c.window_begin = n > window ? n - window : 0;
}

}  // namespace

LossCheck baseline_loss(std::span<const double> losses, size_t window) {
  LossCheck c;
  c.status = "baseline";
  set_window(c, losses.size(), window);
  c.window_mean = mean_of(losses, c.window_begin, c.window_end);
  c.baseline_window_mean = c.window_mean;
  return c;
}

LossCheck check_loss(std::span<const double> losses, std::optional<std::span<const double>> baseline,
                     size_t window, bool bf16, bool same_batch) {
  LossCheck c;
  if (!baseline || !same_batch) {
    set_window(c, losses.size(), window);
    c.window_mean = mean_of(losses, c.window_begin, c.window_end);
    c.status = !baseline ? "no baseline" : "not comparable";
    return c;
  }
  set_window(c, std::min(losses.size(), baseline->size()), window);
  c.window_mean = mean_of(losses, c.window_begin, c.window_end);
  c.baseline_window_mean = mean_of(*baseline, c.window_begin, c.window_end);
  if (!c.window_mean || !c.baseline_window_mean) {
    c.status = "not comparable";
    return c;
  }
  c.tolerance = bf16 ? kLossToleranceBf16 : kLossToleranceFp32;
  c.rel_diff = (*c.window_mean - *c.baseline_window_mean) / *c.baseline_window_mean;
  c.status = std::abs(*c.rel_diff) <= *c.tolerance ? "ok" : "math changed";
  return c;
}

}  // namespace stepwise::ablations
