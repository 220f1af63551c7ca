// Whether this CPU's oneDNN runs the FP8 matmuls the FP8 tests ask for (model/, bench/'s runner, the ablations' FP8
// math class): on a CPU with AVX-512 FP16 and AMX it does (in its reference kernel); capped below that
// (ONEDNN_MAX_CPU_ISA=AVX2, or =AVX512_CORE_BF16: AVX-512 with bf16 but no FP16) it cannot create the primitive at all.
// A test that needs them is skipped there with this reason, never failed: a property of the CPU, not of the FP8 path.
#pragma once

#include "bench/step/bf16.h"
#include "model/fp8_linear.h"
#include "model/gpt.h"
#include "tests/support.h"

#include <ATen/ATen.h>

#include <exception>
#include <optional>
#include <string>

namespace stepwise::testing {

// nullopt where FP8 runs forward and backward in both scalings, pure bf16 and under autocast, in a linear alone and
// in a GPT with every layer and the head in FP8; else why not. Asked once per process, on the smallest operands
// _scaled_mm takes (sizes multiples of 16) and a one-layer GPT 64 wide on 16 tokens: its reference kernel takes about
// 30 ns a multiply-add, so the tests' own operands (4 x 64 x 256 by 1024) made every probe some 20 s. A linear alone
// is not enough: capped to AVX2 it ran on those operands and on these while a GPT's linears could not create their
// primitive (the probe once said yes there and five tests failed).
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
          constexpr int64_t kVocab = 64, kTokens = 16;
          const auto config = small_config().n_layer(1).vocab_size(kVocab);
          model::GPT gpt(model::GPTConfig(config).fp8(true).fp8_scaling(scaling).fp8_every_layer(true).fp8_head(true));
          if (!autocast) gpt->to(at::kBFloat16);
          const auto idx = at::randint(kVocab, {1, kTokens}, at::kLong);
          gpt->loss(idx, idx).backward();
        }
      return std::nullopt;
    } catch (const std::exception& e) {
      return "this CPU's oneDNN runs no FP8 matmul (" + std::string(e.what()).substr(0, 120) + ")";
    }
  }();
  return missing;
}

}  // namespace stepwise::testing
