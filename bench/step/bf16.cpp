// bf16's two modes: the pure cast of the whole model, and AutocastGuard, torch.autocast's behaviour in C++.
#include "bench/step/bf16.h"

#include <ATen/autocast_mode.h>

namespace stepwise::bench {

void cast_model_for_bf16(model::GPT& model, const RunConfig& config) {
  if (config.bf16 && config.bf16_mode == Bf16Mode::Pure) model->to(at::kBFloat16);
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
