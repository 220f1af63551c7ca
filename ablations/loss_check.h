// The loss check: a configuration's loss curve against its suite's baseline, so broken math shows.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace stepwise::ablations {

// Relative tolerances on the windowed mean loss. Both runs start from the same weights and see the same batches,
// so fp32 variants differ only by rounding and dropout draws; bf16 rounds every activation (and, pure, every
// weight update), so its curve wanders further.
constexpr double kLossToleranceFp32 = 0.02;
constexpr double kLossToleranceBf16 = 0.05;

struct LossCheck {
  // "baseline" (this is the reference), "ok", "math changed", "no baseline" (none finished in this invocation),
  // "not comparable" (a different batch, so different data per step, or no finite loss in the window)
  std::string status;
  // The compared window over measured steps: the last `window` steps both runs have, [begin, end).
  size_t window_begin = 0, window_end = 0;
  std::optional<double> window_mean, baseline_window_mean, rel_diff, tolerance;
};

// Every configuration gets a window mean of its own; with a baseline the window is the last `window` steps
// of the measured steps both runs share, so a longer run is never compared at a later point of training.
LossCheck check_loss(std::span<const double> losses, std::optional<std::span<const double>> baseline,
                     size_t window, bool bf16, bool same_batch);
LossCheck baseline_loss(std::span<const double> losses, size_t window);

}  // namespace stepwise::ablations
