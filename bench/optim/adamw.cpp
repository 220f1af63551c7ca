// The optimizer factory, torch.optim's single-tensor loop ported to C++, and the C++ frontend's own AdamW
// (torch::optim::AdamW).
#include "bench/optim/adamw.h"

#include "bench/optim/adamw_foreach.h"
#include "bench/optim/adamw_fused.h"
#include "model/number.h"

#include <torch/csrc/autograd/grad_mode.h>
#include <torch/optim/adamw.h>

#include <cmath>

#include <stdexcept>

namespace stepwise::bench {

namespace {

class ReferenceAdamW final : public AdamW {
 public:
  ReferenceAdamW(std::vector<at::Tensor> params, const AdamWOptions& o)
      : optimizer_(std::move(params), torch::optim::AdamWOptions(o.lr())
                                          .betas({o.beta1(), o.beta2()})
                                          .eps(o.eps())
                                          .weight_decay(o.weight_decay())) {}
  void step() override { optimizer_.step(); }
  void zero_grad() override { optimizer_.zero_grad(/*set_to_none=*/true); }
  void set_lr(double lr) override {
    for (auto& group : optimizer_.param_groups()) group.options().set_lr(lr);
  }
  std::string name() const override { return "reference"; }
  // exp_avg and exp_avg_sq per parameter (its step count is a tensor too, of one element: not counted).
  int64_t state_bytes() const override { return 2 * bytes_of(optimizer_.param_groups().front().params()); }
  // Per parameter in order: its step count (-1 before its first step) and, once made, its two moments.
  OptimizerState save_state() const override {
    OptimizerState out;
    for (const auto& p : optimizer_.param_groups().front().params()) {
      const auto it = optimizer_.state().find(p.unsafeGetTensorImpl());
      if (it == optimizer_.state().end()) {
        out.counters.push_back(-1);
        continue;
      }
      const auto& s = static_cast<const torch::optim::AdamWParamState&>(*it->second);
      out.counters.push_back(s.step());
      out.tensors.push_back(s.exp_avg().clone());
      out.tensors.push_back(s.exp_avg_sq().clone());
    }
    return out;
  }
  void load_state(const OptimizerState& state) override {
    auto& params = optimizer_.param_groups().front().params();
    size_t t = 0;
    for (size_t i = 0; i < params.size(); ++i) {
      void* key = params[i].unsafeGetTensorImpl();
      if (state.counters.at(i) < 0) {
        optimizer_.state().erase(key);
        continue;
      }
      auto s = std::make_unique<torch::optim::AdamWParamState>();
      s->step(state.counters[i]);
      s->exp_avg(state.tensors.at(t++).clone());
      s->exp_avg_sq(state.tensors.at(t++).clone());
      optimizer_.state()[key] = std::move(s);
    }
  }

 private:
  torch::optim::AdamW optimizer_;
};

// torch.optim's _single_tensor_adam with decoupled weight decay, op for op: what Python's torch.optim.AdamW() runs on
// a CPU, and the baseline there. The step count stays on the host, as Python reads it back with .item() anyway.
// Where torch.optim passes a Python float to mul_, div and add_, the number goes in as Python passes it
// (model/number.h): one op each, not the Scalar overload's two. lerp_, addcmul_ and addcdiv_ take their Scalar
// natively, on both sides.
class ForloopAdamW final : public HostStepAdamW {
 public:
  ForloopAdamW(std::vector<at::Tensor> params, const AdamWOptions& o) : HostStepAdamW(std::move(params), o) {}
  void step() override {
    torch::NoGradGuard no_grad;
    const auto [grads, bias_correction1, bias_correction2_sqrt] = begin_step("ForloopAdamW");
    const auto& o = options_;
    const double step_size = o.lr() / bias_correction1;
    const at::Tensor decay = model::number(1 - o.lr() * o.weight_decay()), beta2 = model::number(o.beta2()),
                     correction2 = model::number(bias_correction2_sqrt), eps = model::number(o.eps());
    for (size_t i = 0; i < params_.size(); ++i) {
      auto& param = params_[i];
      if (o.weight_decay() != 0) param.mul_(decay);  // decoupled weight decay; none to apply at 0, as torch.optim
      exp_avg_[i].lerp_(grads[i], 1 - o.beta1());
      exp_avg_sq_[i].mul_(beta2).addcmul_(grads[i], grads[i], 1 - o.beta2());
      auto denom = (exp_avg_sq_[i].sqrt() / correction2).add_(eps);
      param.addcdiv_(exp_avg_[i], denom, -step_size);
    }
  }
  std::string name() const override { return "forloop"; }
};

}  // namespace

HostStepAdamW::HostStepAdamW(std::vector<at::Tensor> params, const AdamWOptions& options)
    : params_(std::move(params)), options_(options) {
  if (params_.empty()) throw std::invalid_argument("AdamW needs at least one parameter");
}

HostStepAdamW::StepStart HostStepAdamW::begin_step(const char* who) {
  auto grads = gradients_of(params_, who);
  if (exp_avg_.empty())
    for (const auto& p : params_) {
      exp_avg_.push_back(at::zeros_like(p));
      exp_avg_sq_.push_back(at::zeros_like(p));
    }
  ++step_;
  const auto t = static_cast<double>(step_);
  return {std::move(grads), 1 - std::pow(options_.beta1(), t), std::sqrt(1 - std::pow(options_.beta2(), t))};
}

void HostStepAdamW::zero_grad() {
  for (auto& p : params_) p.mutable_grad().reset();
}

int64_t HostStepAdamW::state_bytes() const { return 2 * bytes_of(params_); }  // the moments, made at the first step

// The first moments, then the second (none before the first step), and the step count.
OptimizerState HostStepAdamW::save_state() const {
  OptimizerState out{copies_of(exp_avg_), {step_}, {}};
  const auto second = copies_of(exp_avg_sq_);
  out.tensors.insert(out.tensors.end(), second.begin(), second.end());
  return out;
}

void HostStepAdamW::load_state(const OptimizerState& state) {
  const auto half = static_cast<std::ptrdiff_t>(state.tensors.size() / 2);
  put_back(exp_avg_, {state.tensors.begin(), state.tensors.begin() + half});
  put_back(exp_avg_sq_, {state.tensors.begin() + half, state.tensors.end()});
  step_ = state.counters.at(0);
}

std::vector<at::Tensor> copies_of(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> out;
  out.reserve(tensors.size());
  for (const auto& t : tensors) out.push_back(t.detach().clone());
  return out;
}

void put_back(std::vector<at::Tensor>& into, const std::vector<at::Tensor>& copies) {
  torch::NoGradGuard no_grad;
  if (into.size() != copies.size() || into.empty()) {
    into = copies_of(copies);
    return;
  }
  for (size_t i = 0; i < into.size(); ++i) into[i].copy_(copies[i]);
}

std::string to_string(AdamWKind k) { return kAdamWKindNames.to_string(k); }

AdamWKind adamw_kind_from_string(const std::string& s) { return kAdamWKindNames.from_string(s); }

std::vector<at::Tensor> gradients_of(const std::vector<at::Tensor>& params, const char* who) {
  std::vector<at::Tensor> grads;
  grads.reserve(params.size());
  for (const auto& p : params) {
    if (!p.grad().defined()) throw std::runtime_error(std::string(who) + ": a parameter has no gradient");
    grads.push_back(p.grad());
  }
  return grads;
}

int64_t bytes_of(const std::vector<at::Tensor>& tensors) {
  int64_t bytes = 0;
  for (const auto& t : tensors) bytes += static_cast<int64_t>(t.nbytes());
  return bytes;
}

std::unique_ptr<AdamW> make_adamw(AdamWKind kind, std::vector<at::Tensor> params, const AdamWOptions& options) {
  switch (kind) {
    case AdamWKind::Forloop: return std::make_unique<ForloopAdamW>(std::move(params), options);
    case AdamWKind::Reference: return std::make_unique<ReferenceAdamW>(std::move(params), options);
    case AdamWKind::Foreach: return std::make_unique<ForeachAdamW>(std::move(params), options);
    case AdamWKind::Fused: return std::make_unique<FusedAdamW>(std::move(params), options);
  }
  throw std::invalid_argument("unknown AdamW kind");
}

}  // namespace stepwise::bench
