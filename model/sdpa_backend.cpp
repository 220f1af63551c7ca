// SdpaBackendGuard: save, pin, restore the global SDPA flags in at::globalContext().
#include "model/sdpa_backend.h"

#include <ATen/Context.h>

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

}  // namespace stepwise::model
