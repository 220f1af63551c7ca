// SdpaBackendGuard: save, pin, restore the global SDPA flags in at::globalContext().
#include "model/sdpa_backend.h"

#include <ATen/Context.h>

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
    case SdpaBackend::Math:
      return std::nullopt;
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

}  // namespace stepwise::model
