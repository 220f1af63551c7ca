// The loss check's arithmetic: windows at both ends of the shared steps, the drop between them, and the verdict
// against the class's tolerance, with the one-line reason the result and the report show.
#include "ablations/judges/loss_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace stepwise::ablations {

namespace {

// Mean over [begin, end), or nullopt when it is not finite.
std::optional<double> mean_of(std::span<const double> v, size_t begin, size_t end) {
  const double m = std::accumulate(v.begin() + static_cast<long>(begin), v.begin() + static_cast<long>(end), 0.0) /
                   static_cast<double>(end - begin);
  return std::isfinite(m) ? std::optional(m) : std::nullopt;
}

// The windows at each end: a fifth of the shared steps, at least two, so one noisy step does not decide.
size_t window(size_t n) { return std::max<size_t>(2, n / 5); }

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

}  // namespace

LossTolerance tolerance_for(MathClass c, Spread spread) {
  switch (c) {
    case MathClass::Exact: return {1e-4, 1e-3, 1e-5};
    case MathClass::Fp32:
      if (spread == Spread::Tight) return {3e-4, 2e-3, 5e-4};
      return {1e-2, 0.05, 5e-3};  // start: another dropout stream moves it by up to about a thousandth
    case MathClass::Bf16: return {3e-2, 0.15, 2e-2};
    // FP8 runs only on a GPU, where the bounds stay those of bf16, its companion: on the CPU, where _scaled_mm runs the
    // same calls, FP8 on top of bf16 autocast (every linear, the head included) kept the start and end loss within
    // 4e-4 and the drop within 2e-4 of float32, about ten times what bf16 alone strayed at the start and end and
    // far inside these bounds (measured by tests/ablations/flag_table/fp8_math_class_test.cpp, which prints them and
    // fails if FP8 strays to a tenth of the bounds).
    case MathClass::Fp8: return {3e-2, 0.15, 2e-2};
    case MathClass::Learning:  // no tolerance: the curve is meant to move
    case MathClass::Batch: break;
  }
  return {0, 0, 0};
}

double rounding_step(LossRounding r, double loss) {
  if (r == LossRounding::Fp32 || !std::isfinite(loss) || loss == 0) return 0;
  constexpr int kBf16SignificantBits = 8;  // 7 stored + the implicit leading bit
  return std::ldexp(1.0, std::ilogb(std::abs(loss)) - (kBf16SignificantBits - 1));
}

LossCheck baseline_loss(std::span<const double> losses) {
  LossCheck c;
  c.status = "baseline";
  c.reason = "the reference the suite's other configurations are checked against";
  c.steps_compared = losses.size();
  if (losses.size() >= 2 * window(losses.size())) {
    const size_t k = window(losses.size());
    const auto first = mean_of(losses, 0, k), last = mean_of(losses, losses.size() - k, losses.size());
    if (first && last) c.baseline_drop = c.drop = *first - *last;
  }
  return c;
}

LossCheck check_loss(std::span<const double> losses, std::optional<std::span<const double>> baseline, MathClass math,
                     bool same_batch, LossRounding rounding, Spread spread) {
  LossCheck c;
  c.math = math;
  if (!baseline) {
    c.status = "no baseline";
    c.reason = "no baseline finished in this invocation to compare with";
    return c;
  }
  if (!same_batch || math == MathClass::Batch) {
    c.status = "not comparable";
    c.reason = "a different batch than the baseline's, so different data at every step";
    return c;
  }
  const size_t n = std::min(losses.size(), baseline->size());
  c.steps_compared = n;
  if (math == MathClass::Learning) {
    c.status = "changes the function";
    c.reason =
        "class learning changes the function on purpose (another position encoding, optimizer, activation, "
        "schedule): judged by time to a target loss (--target-loss), not by the loss curve";
    return c;
  }
  auto tol = tolerance_for(math, spread);
  c.tolerance = tol;
  const size_t k = window(n);
  if (n < std::max(kMinSharedSteps, 2 * k)) {
    c.status = "too short to judge";
    c.reason = std::to_string(n) + " shared steps; a verdict needs " + std::to_string(kMinSharedSteps) +
               " (raise --min-steps or --max-time)";
    return c;
  }
  const auto a = losses.first(n), b = baseline->first(n);
  const auto a_first = mean_of(a, 0, k), a_last = mean_of(a, n - k, n);
  const auto b_first = mean_of(b, 0, k), b_last = mean_of(b, n - k, n);
  if (!a_first || !a_last || !b_first || !b_last || !std::isfinite(a[0]) || !std::isfinite(b[0])) {
    c.status = "not comparable";
    c.reason = "a loss in the compared windows is not finite";
    return c;
  }
  c.drop = *a_first - *a_last;
  c.baseline_drop = *b_first - *b_last;
  c.start_diff = (a[0] - b[0]) / b[0];
  c.end_diff = (*a_last - *b_last) / *b_last;
  if (*c.baseline_drop < kMinBaselineDrop) {
    c.status = "too short to judge";
    c.reason = "the baseline's loss fell only " + fmt("%.3f", *c.baseline_drop) + " over " + std::to_string(n) +
               " shared steps; a verdict needs " + fmt("%.2f", kMinBaselineDrop) + " (raise --min-steps or --max-time)";
    return c;
  }
  if (const double q = rounding_step(rounding, *b_first); q > 0) {
    if (*c.baseline_drop < kMinDropInRoundingSteps * q) {
      c.status = "too short to judge";
      c.reason = "the loss is rounded to bfloat16 (steps of " + fmt("%g", q) + " near " + fmt("%.1f", *b_first) +
                 "); the baseline's drop of " + fmt("%.3f", *c.baseline_drop) + " over " + std::to_string(n) +
                 " shared steps is under " + fmt("%g", kMinDropInRoundingSteps) +
                 " such steps (raise --min-steps or --max-time)";
      return c;
    }
    tol.start_rel += rounding_step(rounding, b[0]) / 2 / b[0];
    tol.end_rel += rounding_step(rounding, *b_last) / 2 / *b_last;
    tol.drop_ratio += q / *c.baseline_drop;
    c.tolerance = tol;
  }
  const double ratio = *c.drop / *c.baseline_drop;
  const std::string what = "drop " + fmt("%.3f", *c.drop) + " vs " + fmt("%.3f", *c.baseline_drop) + " (x" +
                           fmt("%.4f", ratio) + "), end " + fmt("%+.2e", *c.end_diff) + ", start " +
                           fmt("%+.2e", *c.start_diff) + " over " + std::to_string(n) + " steps";
  const bool ok = std::abs(ratio - 1) <= tol.drop_ratio && std::abs(*c.end_diff) <= tol.end_rel &&
                  std::abs(*c.start_diff) <= tol.start_rel;
  c.status = ok ? "ok" : "math changed";
  c.reason = what + (ok ? ", within the " : ", outside the ") +
             (math == MathClass::Fp32 && spread == Spread::Tight ? "fp32 (CPU)" : to_string(math)) +
             (rounding == LossRounding::Bf16 ? " tolerance widened for a bf16-rounded loss" : " tolerance") +
             " (drop x1 +/- " + fmt("%g", tol.drop_ratio) + ", end +/- " + fmt("%g", tol.end_rel) + ", start +/- " +
             fmt("%g", tol.start_rel) + ")";
  return c;
}

}  // namespace stepwise::ablations
