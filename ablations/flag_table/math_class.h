// A flag's math class: what it may change in the arithmetic. Each flag declares one in the flag table; the loss check
// (ablations/judges/loss_check.h) turns the loosest class of a row's flags into its tolerances.
#pragma once

#include "model/enum_names.h"

#include <string>

namespace stepwise::ablations {

// What a configuration's flags may change in the arithmetic, loosest wins (each flag declares its class).
enum class MathClass {
  Exact,  // the computation order is unchanged (the mask's construction, a fused kernel of the same update): curves
          // agree to float32 rounding
  Fp32,   // other float32 kernels (native layers, SDPA, TF32, a padded softmax, a graph replay): rounding that
          // compounds, and another dropout stream (a GPU's kernels, torch.compile's masks), which moves the first
          // loss by up to about a thousandth
  Bf16,   // bfloat16 arithmetic (pure bf16 rounds the loss itself to 8 bits)
  Fp8,    // FP8 GEMM operands (3 or 2 mantissa bits, scaled per tensor or row), on top of bf16
  // Another function on purpose (the speedrun's rotary, Muon, ReLU^2, ...): the curve is meant to differ, so no
  // tolerance holds it; such a flag is judged by time to a target loss (the convergence verdict), never "math changed"
  Learning,
  Batch,  // a different batch: different data per step, not comparable
};
inline constexpr auto kMathClassNames = model::enum_names<MathClass>("math class", {{MathClass::Exact, "exact"},
                                                                                    {MathClass::Fp32, "fp32"},
                                                                                    {MathClass::Bf16, "bf16"},
                                                                                    {MathClass::Fp8, "fp8"},
                                                                                    {MathClass::Learning, "learning"},
                                                                                    {MathClass::Batch, "batch"}});
std::string to_string(MathClass c);

}  // namespace stepwise::ablations
