// ForeachAdamW: the multi-tensor AdamW update, with host or device bias corrections.
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

void ForeachAdamW::init_state() {
  for (const auto& p : params_) {
    exp_avg_.push_back(at::zeros_like(p));
    exp_avg_sq_.push_back(at::zeros_like(p));
    if (options_.capturable()) steps_.push_back(at::zeros({}, p.options().dtype(at::kFloat)));
  }
  if (options_.capturable()) lr_ = at::full({}, options_.lr(), params_.front().options().dtype(at::kFloat));
}

void ForeachAdamW::step() {
  torch::NoGradGuard no_grad;
  const auto grads = gradients_of(params_, "ForeachAdamW");
  if (exp_avg_.empty()) init_state();
  if (options_.capturable())
    step_device_bias_correction(grads);
  else
    step_host_bias_correction(grads);
}

void ForeachAdamW::step_host_bias_correction(const std::vector<at::Tensor>& grads) {
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

// torch.optim's capturable=True path: the step count and both bias corrections stay on the device.
void ForeachAdamW::step_device_bias_correction(const std::vector<at::Tensor>& grads) {
  const auto& o = options_;
  at::_foreach_add_(steps_, 1);
  at::_foreach_mul_(params_, 1 - lr_ * o.weight_decay());
  at::_foreach_lerp_(exp_avg_, grads, 1 - o.beta1());
  at::_foreach_mul_(exp_avg_sq_, o.beta2());
  at::_foreach_addcmul_(exp_avg_sq_, grads, grads, 1 - o.beta2());

  auto step_size = at::_foreach_pow(o.beta1(), steps_);  // beta1^t
  at::_foreach_sub_(step_size, 1);                       // -(1 - beta1^t)
  at::_foreach_div_(step_size, lr_);
  at::_foreach_reciprocal_(step_size);  // -lr / (1 - beta1^t)
  auto bias_correction2_sqrt = at::_foreach_pow(o.beta2(), steps_);
  at::_foreach_sub_(bias_correction2_sqrt, 1);
  at::_foreach_neg_(bias_correction2_sqrt);
  at::_foreach_sqrt_(bias_correction2_sqrt);  // sqrt(1 - beta2^t)

  auto denom = at::_foreach_sqrt(exp_avg_sq_);
  at::_foreach_div_(denom, bias_correction2_sqrt);
  at::_foreach_add_(denom, o.eps());
  at::_foreach_div_(denom, step_size);  // negative: addcdiv below subtracts
  at::_foreach_addcdiv_(params_, exp_avg_, denom);
}

void ForeachAdamW::zero_grad() {
  for (auto& p : params_) p.mutable_grad().reset();
}

}  // namespace stepwise::bench
