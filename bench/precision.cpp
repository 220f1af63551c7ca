// Tf32Guard and AutocastGuard.
#include "bench/precision.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>

namespace stepwise::bench {

Tf32Guard::Tf32Guard(bool enabled) {
  auto& ctx = at::globalContext();
  for (size_t i = 0; i < kOps.size(); ++i) saved_[i] = ctx.float32Precision(at::Float32Backend::CUDA, kOps[i]);
  ctx.setAllowTF32CuBLAS(enabled);
  ctx.setAllowTF32CuDNN(enabled);
}

Tf32Guard::~Tf32Guard() {
  auto& ctx = at::globalContext();
  // The legacy switches first, then the exact table entries (NONE, "fall back", is not the same value as IEEE).
  ctx.setAllowTF32CuBLAS(saved_[0] == at::Float32Precision::TF32);
  ctx.setAllowTF32CuDNN(saved_[1] == at::Float32Precision::TF32);
  for (size_t i = 0; i < kOps.size(); ++i) ctx.setFloat32Precision(at::Float32Backend::CUDA, kOps[i], saved_[i]);
}

AutocastGuard::AutocastGuard(c10::DeviceType device, bool enabled, c10::ScalarType dtype, bool cache_enabled)
    : device_(device), active_(enabled) {
  if (!active_) return;
  prev_enabled_ = at::autocast::is_autocast_enabled(device_);
  prev_dtype_ = at::autocast::get_autocast_dtype(device_);
  prev_cache_ = at::autocast::is_autocast_cache_enabled();
  at::autocast::set_autocast_enabled(device_, true);
  at::autocast::set_autocast_dtype(device_, dtype);  // CUDA's default is fp16: always name bf16
  at::autocast::set_autocast_cache_enabled(cache_enabled);
  at::autocast::increment_nesting();
}

AutocastGuard::~AutocastGuard() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(device_, prev_enabled_);
  at::autocast::set_autocast_dtype(device_, prev_dtype_);
  at::autocast::set_autocast_cache_enabled(prev_cache_);
}

}  // namespace stepwise::bench
