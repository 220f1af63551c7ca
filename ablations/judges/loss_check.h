// The loss check: every configuration of a suite starts from the same weights and sees the same batches in the same
// order, so its loss curve can be held against the baseline's. It judges what training did — the loss drop over the
// steps both runs share, and the loss at the same step — with tolerances that follow from what the flags in effect
// may change, and says so in one line. A flag that breaks the math shows here; a run too short to tell says so.
#pragma once

#include "ablations/flag_table/math_class.h"

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace stepwise::ablations {

// How far the curve may stray, by class: the relative difference of the loss at the end of the shared steps, the
// ratio of the loss drops, and the relative difference of the very first loss (same weights, same batch).
struct LossTolerance {
  double end_rel, drop_ratio, start_rel;
};
// How far apart rounding alone carries two runs, which the fp32 class's bounds follow. Tight: both runs eager on a
// CPU, where kernels are deterministic and dropout draws one stream — fp32 flags were measured to keep the loss
// within 1e-4 and the drop within 2e-4 there (tiny and mini presets, 40 to 60 steps), and the bounds are a few
// times that, tight enough to catch an attention that sees one token ahead. Loose: a GPU's kernels, or a compiled
// row's own dropout masks; its bounds stay wide until verify-gpu.sh measures a GPU's spread.
enum class Spread { Tight, Loose };
LossTolerance tolerance_for(MathClass c, Spread spread = Spread::Loose);

// A verdict needs a baseline that visibly learned: at least this many shared steps, and a drop of at least this much
// (nats) over them; below that, "too short to judge", never "ok".
constexpr size_t kMinSharedSteps = 8;
constexpr double kMinBaselineDrop = 0.05;

// How the compared run's loss was stored. Pure bf16 computes the loss itself in bfloat16: 8 significant bits, so near
// 11 nats it moves in steps of 0.0625, as coarse as a short run's whole drop. Such a loss widens each tolerance by the
// rounding it can carry (half a step at each end, a step on the drop), and a verdict then needs a baseline drop of
// at least this many steps, so that rounding cannot decide it.
enum class LossRounding { Fp32, Bf16 };
constexpr double kMinDropInRoundingSteps = 8;
double rounding_step(LossRounding r, double loss);  // the spacing of representable losses near `loss` (0 for fp32)

struct LossCheck {
  // "baseline" (this is the reference), "ok", "math changed", "too short to judge", "not comparable" (a different
  // batch, or no finite loss), "changes the function" (class learning: judged by time to target), "no baseline"
  // (none finished in this invocation)
  std::string status;
  std::string reason;  // one line, always
  std::optional<MathClass> math;
  size_t steps_compared = 0;
  std::optional<double> start_diff, end_diff, drop, baseline_drop;  // start/end: relative; drops: in nats
  std::optional<LossTolerance> tolerance;
};

// `losses` and `baseline`: every recorded step's loss, warm-up first, in order (both runs saw the same batches).
LossCheck check_loss(std::span<const double> losses, std::optional<std::span<const double>> baseline, MathClass math,
                     bool same_batch, LossRounding rounding = LossRounding::Fp32, Spread spread = Spread::Loose);
LossCheck baseline_loss(std::span<const double> losses);

}  // namespace stepwise::ablations
