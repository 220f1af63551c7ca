// AdamW as one fused kernel per dtype/device group: at::_fused_adamw_ (CUDA and CPU).
#pragma once

#include "bench/optim/adamw.h"

namespace stepwise::bench {

class FusedAdamW final : public AdamW {
 public:
  FusedAdamW(std::vector<at::Tensor> params, const AdamWOptions& options);
  void step() override;
  void zero_grad() override;
  void set_lr(double lr) override { options_.lr(lr); }
  std::string name() const override { return "fused"; }
  int64_t state_bytes() const override;
  OptimizerState save_state() const override;
  void load_state(const OptimizerState& state) override;

 private:
  std::vector<at::Tensor> params_, exp_avg_, exp_avg_sq_;
  std::vector<at::Tensor> steps_;  // float32 0-dim per parameter, on its device; the kernel does not increment it
  AdamWOptions options_;
};

}  // namespace stepwise::bench
