// FusedAdamW: state in torch.optim's fused layout, then one at::_fused_adamw_ call per step.
#include "bench/optim/adamw_fused.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <stdexcept>

namespace stepwise::bench {

FusedAdamW::FusedAdamW(std::vector<at::Tensor> params, const AdamWOptions& options)
    : params_(std::move(params)), options_(options) {
  if (params_.empty()) throw std::invalid_argument("AdamW needs at least one parameter");
  for (const auto& p : params_) {
    if (p.scalar_type() != params_.front().scalar_type() || p.device() != params_.front().device())
      throw std::invalid_argument("fused AdamW needs all parameters on one device with one dtype");
    exp_avg_.push_back(at::zeros_like(p));
    exp_avg_sq_.push_back(at::zeros_like(p));
    steps_.push_back(at::zeros({}, p.options().dtype(at::kFloat)));
  }
}

void FusedAdamW::step() {
  torch::NoGradGuard no_grad;
  const auto grads = gradients_of(params_, "FusedAdamW");
  const auto& o = options_;
  at::_foreach_add_(steps_, 1);
  at::_fused_adamw_(params_, grads, exp_avg_, exp_avg_sq_, /*max_exp_avg_sqs=*/{}, steps_, o.lr(), o.beta1(), o.beta2(),
                    o.weight_decay(), o.eps(), /*amsgrad=*/false, /*maximize=*/false);
}

void FusedAdamW::zero_grad() {
  for (auto& p : params_) p.mutable_grad().reset();
}

int64_t FusedAdamW::state_bytes() const { return bytes_of(exp_avg_) + bytes_of(exp_avg_sq_) + bytes_of(steps_); }

// The first moments, the second, then the device step counts: all made at construction, so always as many.
OptimizerState FusedAdamW::save_state() const {
  OptimizerState out;
  for (const auto* part : {&exp_avg_, &exp_avg_sq_, &steps_}) {
    const auto copied = copies_of(*part);
    out.tensors.insert(out.tensors.end(), copied.begin(), copied.end());
  }
  return out;
}

void FusedAdamW::load_state(const OptimizerState& state) {
  const auto n = static_cast<std::ptrdiff_t>(params_.size());
  const auto from = state.tensors.begin();
  put_back(exp_avg_, {from, from + n});
  put_back(exp_avg_sq_, {from + n, from + 2 * n});
  put_back(steps_, {from + 2 * n, from + 3 * n});
}

}  // namespace stepwise::bench
