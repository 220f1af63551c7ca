// Scoped pin of the scaled_dot_product_attention backend (LibTorch has no sdpa_kernel guard).
#pragma once

#include "model/config.h"

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

}  // namespace stepwise::model
