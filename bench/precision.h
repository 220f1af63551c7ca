// Scoped numeric modes: TF32 matmuls and bf16 autocast (LibTorch has no RAII guard for either).
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

namespace stepwise::bench {

// TF32 for CUDA float32 matmuls and convolutions through the at::globalContext() precision API; off means
// IEEE. Restores the previous setting on exit. Only the new (backend, op) API is used: reading the legacy
// getters after setting the new one fails in recent torch.
class Tf32Guard {
 public:
  explicit Tf32Guard(bool enabled);
  ~Tf32Guard();
  Tf32Guard(const Tf32Guard&) = delete;
  Tf32Guard& operator=(const Tf32Guard&) = delete;

 private:
  int matmul_, conv_;  // saved at::Float32Precision values
};

// Mirrors torch.autocast: save state, enable with the dtype, bump the nesting; on exit clear the cast cache
// when the outermost scope closes and restore. Run backward() outside it.
class AutocastGuard {
 public:
  AutocastGuard(c10::DeviceType device, bool enabled, c10::ScalarType dtype = c10::kBFloat16,
                bool cache_enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  c10::DeviceType device_;
  bool active_;
  bool prev_enabled_ = false, prev_cache_ = true;
  c10::ScalarType prev_dtype_ = c10::kBFloat16;
};

}  // namespace stepwise::bench
