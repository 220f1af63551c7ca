// soft_cap, its backward and the cap fused with the cross-entropy: the logit_softcap flag, applied where the logits
// become the loss (model/gpt.cpp's loss and forward, and model/chunked_ce.cpp's chunks).
#include "model/softcap.h"

#include "model/number.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/custom_function.h>

#include <optional>

namespace stepwise::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct SoftCappedCrossEntropy : torch::autograd::Function<SoftCappedCrossEntropy> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& logits, const at::Tensor& targets, double cap) {
    // (N, V) in the logits' dtype: soft_cap's ops, in place after the first
    at::Tensor capped = (logits / number(cap)).tanh_().mul_(number(cap));
    // Under autocast cross_entropy_loss runs in float32: its cast, then its log-softmax and nll_loss.
    const bool autocast = at::autocast::is_autocast_enabled(logits.device().type());
    at::Tensor logp = at::log_softmax(capped, 1, autocast ? std::optional(at::kFloat) : std::nullopt);  // (N, V)
    ctx->save_for_backward({capped, logp, targets});
    ctx->saved_data["dtype"] = static_cast<int64_t>(logits.scalar_type());
    ctx->saved_data["cap"] = cap;
    return at::nll_loss_nd(logp, targets);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    // A second backward (retain_graph) fails on autograd's own version check: the saved tensors changed.
    const auto saved = ctx->get_saved_variables();
    at::Tensor tanh_of_scaled = saved[0];  // the capped logits, becoming tanh(logits / cap) again
    at::Tensor grad = saved[1];            // the log-probabilities, (N, V), becoming the gradient in place
    const at::Tensor& targets = saved[2];
    const int64_t N = grad.size(0);
    const double cap = ctx->saved_data["cap"].toDouble();
    const at::Tensor g = grads[0] / number(static_cast<double>(N));      // the mean's share of the loss's gradient
    grad.exp_().mul_(g);                                                 // softmax g / N
    grad.scatter_add_(1, targets.unsqueeze(1), g.neg().expand({N, 1}));  // - g / N at each row's target
    tanh_of_scaled.div_(number(cap));                                    // (tanh * cap) / cap: tanh to its rounding
    at::tanh_backward_out(grad, grad, tanh_of_scaled);                   // times the cap's derivative, 1 - tanh^2
    const auto dtype = static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt());
    return {grad.to(dtype), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

// The cap goes in as Python's `logits / cap` passes it (model/number.h): one aten::div and one aten::mul.
at::Tensor soft_cap(const at::Tensor& logits, double cap) { return at::tanh(logits / number(cap)) * number(cap); }

at::Tensor soft_capped_cross_entropy(const at::Tensor& logits, const at::Tensor& targets, double cap) {
  return SoftCappedCrossEntropy::apply(logits, targets, cap);
}

at::Tensor soft_cap_backward(const at::Tensor& grad_capped, const at::Tensor& tanh_of_scaled, double cap) {
  return at::tanh_backward(grad_capped * cap, tanh_of_scaled) / cap;
}

}  // namespace stepwise::model
