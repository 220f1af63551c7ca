// ForeachAdamW: the multi-tensor AdamW update, bias corrections computed on the host.
#include "bench/optim/adamw_foreach.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <cmath>
#include <stdexcept>

namespace stepwise::bench {

ForeachAdamW::ForeachAdamW(std::vector<at::Tensor> params, const AdamWOptions& options)
    : params_(std::move(params)), options_(options) {
  if (params_.empty()) throw std::invalid_argument("AdamW needs at least one parameter");
}

void ForeachAdamW::step() {
  torch::NoGradGuard no_grad;
  const auto grads = gradients_of(params_, "ForeachAdamW");
  if (exp_avg_.empty())
    for (const auto& p : params_) {
      exp_avg_.push_back(at::zeros_like(p));
      exp_avg_sq_.push_back(at::zeros_like(p));
    }
  const auto& o = options_;
  ++step_;
  const double bias_correction1 = 1 - std::pow(o.beta1(), static_cast<double>(step_));
  const double bias_correction2_sqrt = std::sqrt(1 - std::pow(o.beta2(), static_cast<double>(step_)));
  at::_foreach_mul_(params_, 1 - o.lr() * o.weight_decay());  // decoupled weight decay
  at::_foreach_lerp_(exp_avg_, grads, 1 - o.beta1());
  at::_foreach_mul_(exp_avg_sq_, o.beta2());
  at::_foreach_addcmul_(exp_avg_sq_, grads, grads, 1 - o.beta2());
  auto denom = at::_foreach_sqrt(exp_avg_sq_);
  at::_foreach_div_(denom, bias_correction2_sqrt);
  at::_foreach_add_(denom, o.eps());
  at::_foreach_addcdiv_(params_, exp_avg_, denom, -o.lr() / bias_correction1);
}

void ForeachAdamW::zero_grad() {
  for (auto& p : params_) p.mutable_grad().reset();
}

}  // namespace stepwise::bench
