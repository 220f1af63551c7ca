// AdamW over all parameters at once with at::_foreach_* (torch.optim's _multi_tensor_adam, its default on CUDA).
#pragma once

#include "bench/optim/adamw.h"

namespace stepwise::bench {

class ForeachAdamW final : public HostStepAdamW {
 public:
  ForeachAdamW(std::vector<at::Tensor> params, const AdamWOptions& options)
      : HostStepAdamW(std::move(params), options) {}
  void step() override;
  std::string name() const override { return "foreach"; }
};

}  // namespace stepwise::bench
