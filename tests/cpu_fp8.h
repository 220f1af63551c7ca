// Whether this CPU's oneDNN runs the FP8 matmuls the FP8 tests ask for (model/, ablations/ FP8 math class): on a CPU
// with AVX-512 FP16 and AMX it does (in its reference kernel); capped below that (ONEDNN_MAX_CPU_ISA=AVX2, or
// =AVX512_CORE_BF16: AVX-512 with bf16 but no FP16) it cannot create the primitive at all. A test that needs them is
// skipped there with this reason, never failed: a property of the CPU, not of the FP8 path.
#pragma once

#include "bench/step/bf16.h"
#include "model/fp8_linear.h"

#include <ATen/ATen.h>

#include <exception>
#include <optional>
#include <string>

namespace stepwise::testing {

// nullopt where an FP8 linear runs forward and backward in both scalings, pure bf16 and under autocast; else why not.
// Asked once per process, on the smallest operands _scaled_mm takes (sizes multiples of 16): whether oneDNN can build
// the primitive depends on the dtypes, not the sizes, and its reference kernel takes about 30 ns a multiply-add, so
// the tests' own operands (4 x 64 x 256 by 1024) made every probe some 20 s.
inline std::optional<std::string> cpu_fp8_missing() {
  static const std::optional<std::string> missing = []() -> std::optional<std::string> {
    try {
      for (auto scaling : {model::Fp8Scaling::Tensorwise, model::Fp8Scaling::Rowwise})
        for (bool autocast : {false, true}) {
          const at::ScalarType hp = autocast ? at::kFloat : at::kBFloat16;
          const auto x = at::randn({1, 16, 32}).to(hp).requires_grad_();
          const auto w = (at::randn({32, 32}) / 8).to(hp).requires_grad_();
          const auto b = at::zeros({32}).to(hp).requires_grad_();
          bench::AutocastGuard guard(c10::kCPU, autocast);
          model::fp8_linear(x, w, b, scaling).sum().backward();
        }
      return std::nullopt;
    } catch (const std::exception& e) {
      return "this CPU's oneDNN runs no FP8 matmul (" + std::string(e.what()).substr(0, 120) + ")";
    }
  }();
  return missing;
}

}  // namespace stepwise::testing
