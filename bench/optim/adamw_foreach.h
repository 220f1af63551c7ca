// AdamW over all parameters at once with at::_foreach_* (torch.optim's _multi_tensor_adam, its default on CUDA).
#pragma once

#include "bench/optim/adamw.h"

namespace stepwise::bench {

class ForeachAdamW final : public AdamW {
 public:
  ForeachAdamW(std::vector<at::Tensor> params, const AdamWOptions& options);
  void step() override;
  void zero_grad() override;
  std::string name() const override { return "foreach"; }

 private:
  std::vector<at::Tensor> params_, exp_avg_, exp_avg_sq_;
  int64_t step_ = 0;  // the step count lives on the host, as torch.optim's non-capturable foreach
  AdamWOptions options_;
};

}  // namespace stepwise::bench
