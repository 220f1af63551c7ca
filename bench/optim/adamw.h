// AdamW in four implementations — torch.optim's single-tensor loop, foreach, the fused kernel, and the C++ frontend's
// own loop — which compute the same update (tests/bench/optim/adamw_test.cpp) at very different speeds.
#pragma once

#include "bench/optim/optimizer.h"
#include "model/enum_names.h"

#include <ATen/core/Tensor.h>
#include <torch/arg.h>

#include <memory>
#include <string>
#include <vector>

namespace stepwise::bench {

enum class AdamWKind {
  Forloop,    // torch.optim's single-tensor loop (_single_tensor_adam), ported: its default on a CPU
  Foreach,    // at::_foreach_* over all parameters at once: torch.optim's default on CUDA
  Fused,      // at::_fused_adamw_ with float32 device step tensors (the fused_adamw flag)
  Reference,  // the C++ frontend's torch::optim::AdamW: a per-parameter loop with a string-keyed state map
};
inline constexpr auto kAdamWKindNames =
    model::enum_names<AdamWKind>("AdamW implementation", {{AdamWKind::Forloop, "forloop"},
                                                          {AdamWKind::Foreach, "foreach"},
                                                          {AdamWKind::Fused, "fused"},
                                                          {AdamWKind::Reference, "reference"}});
std::string to_string(AdamWKind k);
// Throws std::invalid_argument naming the valid choices.
AdamWKind adamw_kind_from_string(const std::string& s);

struct AdamWOptions {
  // Raschka's settings: lr 5e-4, weight decay 0.1 on every parameter, torch's default betas and eps.
  TORCH_ARG(double, lr) = 5e-4;
  TORCH_ARG(double, beta1) = 0.9;
  TORCH_ARG(double, beta2) = 0.999;
  TORCH_ARG(double, eps) = 1e-8;
  TORCH_ARG(double, weight_decay) = 0.1;
};

// One group of parameters at one rate: set_lr sets it. state_bytes counts the two moments of every parameter (and the
// fused kernel's step counts), allocated at the first step or at construction.
class AdamW : public Optimizer {};

// The state torch.optim's loop and foreach AdamW share — the two moments per parameter and a step count on the host —
// and the start of their step: the gradients, the state created on first use, the step's bias corrections.
class HostStepAdamW : public AdamW {
 public:
  void zero_grad() override;
  void set_lr(double lr) override { options_.lr(lr); }
  int64_t state_bytes() const override;
  OptimizerState save_state() const override;
  void load_state(const OptimizerState& state) override;

 protected:
  HostStepAdamW(std::vector<at::Tensor> params, const AdamWOptions& options);
  struct StepStart {
    std::vector<at::Tensor> grads;
    double bias_correction1, bias_correction2_sqrt;
  };
  StepStart begin_step(const char* who);

  std::vector<at::Tensor> params_, exp_avg_, exp_avg_sq_;
  int64_t step_ = 0;  // on the host, as torch.optim's non-capturable loop and foreach keep it
  AdamWOptions options_;
};

// Every parameter's gradient, in order; throws std::runtime_error naming `who` if one has none (the multi-tensor
// kernels need complete lists, and a missing gradient means the step was called out of place).
std::vector<at::Tensor> gradients_of(const std::vector<at::Tensor>& params, const char* who);
// The bytes of these tensors' data.
int64_t bytes_of(const std::vector<at::Tensor>& tensors);
// Copies of `tensors`; and `copies` put back into `into`: in place where it holds tensors of the same count (a
// captured CUDA graph keeps reading the same addresses), else as fresh copies (state not made yet, or made since).
std::vector<at::Tensor> copies_of(const std::vector<at::Tensor>& tensors);
void put_back(std::vector<at::Tensor>& into, const std::vector<at::Tensor>& copies);

std::unique_ptr<AdamW> make_adamw(AdamWKind kind, std::vector<at::Tensor> params, const AdamWOptions& options);

}  // namespace stepwise::bench
