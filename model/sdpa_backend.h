// Scoped pin of the scaled_dot_product_attention backend (LibTorch has no sdpa_kernel guard).
#pragma once

#include "model/config.h"

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

}  // namespace stepwise::model
