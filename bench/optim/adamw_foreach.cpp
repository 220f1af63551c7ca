// ForeachAdamW: the multi-tensor AdamW update, bias corrections computed on the host.
#include "bench/optim/adamw_foreach.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <cmath>

namespace stepwise::bench {

void ForeachAdamW::step() {
  torch::NoGradGuard no_grad;
  const auto [grads, bias_correction1, bias_correction2_sqrt] = begin_step("ForeachAdamW");
  const auto& o = options_;
  at::_foreach_mul_(params_, 1 - o.lr() * o.weight_decay());  // decoupled weight decay
  at::_foreach_lerp_(exp_avg_, grads, 1 - o.beta1());
  at::_foreach_mul_(exp_avg_sq_, o.beta2());
  at::_foreach_addcmul_(exp_avg_sq_, grads, grads, 1 - o.beta2());
  auto denom = at::_foreach_sqrt(exp_avg_sq_);
  at::_foreach_div_(denom, bias_correction2_sqrt);
  at::_foreach_add_(denom, o.eps());
  at::_foreach_addcdiv_(params_, exp_avg_, denom, -o.lr() / bias_correction1);
}

}  // namespace stepwise::bench
