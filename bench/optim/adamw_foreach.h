// AdamW over all parameters at once with at::_foreach_* (torch.optim's _multi_tensor_adam), optionally capturable.
#pragma once

#include "bench/optim/adamw.h"

namespace stepwise::bench {

class ForeachAdamW final : public AdamW {
 public:
  ForeachAdamW(std::vector<at::Tensor> params, const AdamWOptions& options);
  void step() override;
  void zero_grad() override;
  std::string name() const override { return options_.capturable() ? "foreach_capturable" : "foreach"; }
  bool capturable() const override { return options_.capturable(); }

 private:
  void init_state();
  void step_host_bias_correction(const std::vector<at::Tensor>& grads);
  void step_device_bias_correction(const std::vector<at::Tensor>& grads);

  std::vector<at::Tensor> params_, exp_avg_, exp_avg_sq_;
  std::vector<at::Tensor> steps_;  // capturable: one float32 0-dim tensor per parameter, on its device
  at::Tensor lr_;                  // capturable: 0-dim float32 on the parameters' device
  int64_t step_ = 0;               // otherwise the step count lives on the host
  AdamWOptions options_;
};

}  // namespace stepwise::bench
