// SDPA backends: the pin saves, sets and restores the global flags in at::globalContext(); the rest asks SDPA.
#include "model/sdpa.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/SDPBackend.h>

#include <sstream>

namespace stepwise::model {

SdpaBackendGuard::SdpaBackendGuard(SdpaBackend backend) {
  if (backend == SdpaBackend::Auto) return;
  auto& ctx = at::globalContext();
  active_ = true;
  flash_ = ctx.userEnabledFlashSDP();
  efficient_ = ctx.userEnabledMemEfficientSDP();
  math_ = ctx.userEnabledMathSDP();
  cudnn_ = ctx.userEnabledCuDNNSDP();
  ctx.setSDPUseFlash(backend == SdpaBackend::Flash);
  ctx.setSDPUseMemEfficient(backend == SdpaBackend::Efficient);
  ctx.setSDPUseMath(backend == SdpaBackend::Math);
  ctx.setSDPUseCuDNN(backend == SdpaBackend::CuDnn);
}

SdpaBackendGuard::~SdpaBackendGuard() {
  if (!active_) return;
  auto& ctx = at::globalContext();
  ctx.setSDPUseFlash(flash_);
  ctx.setSDPUseMemEfficient(efficient_);
  ctx.setSDPUseMath(math_);
  ctx.setSDPUseCuDNN(cudnn_);
}

std::optional<std::string> sdpa_backend_unavailable(SdpaBackend backend, bool cuda, bool half, double dropout) {
  switch (backend) {
    case SdpaBackend::Auto:
    case SdpaBackend::Math: return std::nullopt;
    case SdpaBackend::Flash:
      if (cuda && !half) return "runs only on bf16/fp16 inputs on CUDA (turn on bf16, or pin efficient)";
      if (!cuda && dropout > 0)
        return "has no dropout on CPU, and this model trains with dropout " + (std::ostringstream() << dropout).str();
      return std::nullopt;
    case SdpaBackend::Efficient:
      if (!cuda) return "is CUDA-only";
      return std::nullopt;
    case SdpaBackend::CuDnn:
      if (!cuda) return "is CUDA-only";
      if (!half) return "runs only on bf16/fp16 inputs (turn on bf16)";
      return std::nullopt;
  }
  return std::nullopt;
}

std::string sdpa_backend_that_runs(SdpaBackend pin, int64_t B, int64_t H, int64_t T, int64_t D, c10::ScalarType dtype,
                                   const c10::Device& device, double dropout) {
  SdpaBackendGuard guard(pin);
  // The same layout the model feeds SDPA: one (B, T, 3, H, D) projection viewed as three (B, H, T, D) tensors, so
  // the stride checks see what training does. at::empty touches no memory.
  // Training: the inputs require gradients, which some backends' checks depend on.
  auto base = at::empty({B, T, 3, H, D}, at::TensorOptions().dtype(dtype).device(device));
  base.set_requires_grad(true);
  auto qkv = base.permute({2, 0, 3, 1, 4});
  auto q = qkv[0], k = qkv[1], v = qkv[2];
  const auto choice = static_cast<at::SDPBackend>(at::_fused_sdp_choice(q, k, v, /*attn_mask=*/{}, dropout,
                                                                        /*is_causal=*/true, /*scale=*/std::nullopt,
                                                                        /*enable_gqa=*/false));
  switch (choice) {
    case at::SDPBackend::flash_attention: return "flash";
    case at::SDPBackend::efficient_attention: return "efficient";
    case at::SDPBackend::cudnn_attention: return "cudnn";
    case at::SDPBackend::math: return "math";
    case at::SDPBackend::overrideable: return "overrideable";
    default: return "none";
  }
}

}  // namespace stepwise::model
