// The flash layout's attention kernel: pinning an SDPA backend for a scope (LibTorch has no sdpa_kernel guard),
// saying why a pinned backend has no kernel for a configuration, and asking SDPA which kernel it will really run.
#pragma once

#include "model/config.h"

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <optional>
#include <string>

namespace stepwise::model {

// Enables only the chosen backend for its lifetime and restores every SDPA flag afterwards; Auto changes nothing.
class SdpaBackendGuard {
 public:
  explicit SdpaBackendGuard(SdpaBackend backend);
  ~SdpaBackendGuard();
  SdpaBackendGuard(const SdpaBackendGuard&) = delete;
  SdpaBackendGuard& operator=(const SdpaBackendGuard&) = delete;

 private:
  bool active_ = false;
  bool flash_ = false, efficient_ = false, math_ = false, cudnn_ = false;
};

// Why a pinned backend has no kernel for these inputs, as a phrase to follow its name ("is CUDA-only"), or
// nullopt. SDPA itself only says "No available kernel".
// `half`: the attention inputs are bf16/fp16; `dropout`: the attention dropout applied in training.
std::optional<std::string> sdpa_backend_unavailable(SdpaBackend backend, bool cuda, bool half, double dropout);

// The kernel family scaled_dot_product_attention will run for the flash layout's q, k, v of shape (B, H, T, D) in
// `dtype` on `device` under `pin`, as SDPA itself decides it (at::_fused_sdp_choice): "flash", "efficient", "cudnn",
// "math" or "overrideable", or "none" when no enabled backend takes these inputs. With auto, PyTorch may well pick
// another kernel than its flag name suggests (cuDNN's attention on recent GPUs), so results record this.
std::string sdpa_backend_that_runs(SdpaBackend pin, int64_t B, int64_t H, int64_t T, int64_t D, c10::ScalarType dtype,
                                   const c10::Device& device, double dropout);

}  // namespace stepwise::model
