// The bf16 flag's whole effect, in its two modes: pure bf16 casts the model (weights, gradients and AdamW state
// follow), as Raschka's step 5; autocast keeps fp32 weights and runs forward and loss under bf16 autocast, as nanoGPT.
#pragma once

#include "bench/run_config.h"
#include "model/gpt.h"

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

namespace stepwise::bench {

// Pure bf16: the whole model in bf16; otherwise nothing.
void cast_model_for_bf16(model::GPT& model, const RunConfig& config);
// Whether forward and loss run under bf16 autocast.
inline bool bf16_autocast(const RunConfig& config) { return config.bf16 && config.bf16_mode == Bf16Mode::Autocast; }

// Mirrors torch.autocast (LibTorch has no guard): save state, enable with the dtype, bump the nesting; on exit clear
// the cast cache when the outermost scope closes and restore. Run backward() outside it. `cache_enabled` must be off
// under CUDA-graph capture, where cached casts would be baked into the graph.
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
