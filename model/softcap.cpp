// soft_cap, the shifted cap the losses compute and its backward, and the cap fused with the cross-entropy: the
// logit_softcap flag, applied where the logits become the loss (model/gpt.cpp's loss and forward, and
// model/chunked_ce.cpp's chunks).
#include "model/softcap.h"

#include "model/number.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/custom_function.h>

namespace stepwise::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// d/dz of 2 c sigmoid(2 z / c): 2 c s (1 - s) 2 / c = 4 s (1 - s).
constexpr double kShiftedCapSlope = 4.0;

struct SoftCappedCrossEntropy : torch::autograd::Function<SoftCappedCrossEntropy> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& logits, const at::Tensor& targets, double cap) {
    at::Tensor shifted = shifted_soft_cap(logits, cap);  // (N, V), float32
    at::Tensor logp = at::log_softmax(shifted, 1);       // (N, V), float32
    ctx->save_for_backward({shifted, logp, targets});
    ctx->saved_data["dtype"] = static_cast<int64_t>(logits.scalar_type());
    ctx->saved_data["cap"] = cap;
    // The loss in the dtype cross_entropy_loss gives: the logits' own, float32 under autocast.
    const bool autocast = at::autocast::is_autocast_enabled(logits.device().type());
    return at::nll_loss_nd(logp, targets).to(autocast ? at::kFloat : logits.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    // A second backward (retain_graph) fails on autograd's own version check: the saved tensors changed.
    const auto saved = ctx->get_saved_variables();
    const int64_t N = saved[1].size(0);
    // The mean's share of the loss's gradient, in the saved tensors' float32.
    const at::Tensor g = grads[0].to(at::kFloat) / number(static_cast<double>(N));
    const at::Tensor grad =
        shifted_soft_cap_cross_entropy_backward(saved[1], saved[0], saved[2], g, ctx->saved_data["cap"].toDouble());
    return {grad.to(static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt())), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

// The cap goes in as Python's `logits / cap` passes it (model/number.h): one aten::div and one aten::mul.
at::Tensor soft_cap(const at::Tensor& logits, double cap) { return at::tanh(logits / number(cap)) * number(cap); }

at::Tensor shifted_soft_cap(const at::Tensor& logits, double cap) {
  at::Tensor scaled =
      logits.scalar_type() == at::kFloat ? logits / number(cap / 2) : logits.to(at::kFloat).div_(number(cap / 2));
  return scaled.sigmoid_().mul_(number(2 * cap));
}

at::Tensor shifted_soft_cap_cross_entropy_backward(at::Tensor logp, at::Tensor shifted, const at::Tensor& targets,
                                                   const at::Tensor& g, double cap) {
  const at::Tensor g4 = g * number(kShiftedCapSlope);
  const int64_t n = logp.size(0);
  logp.exp_().mul_(g4);                                                 // softmax 4 g
  logp.scatter_add_(1, targets.unsqueeze(1), g4.neg().expand({n, 1}));  // - 4 g at each row's target
  shifted.div_(number(2 * cap));                                        // s, to its rounding
  at::sigmoid_backward_out(logp, logp, shifted);                        // times s (1 - s)
  return logp;
}

at::Tensor soft_capped_cross_entropy(const at::Tensor& logits, const at::Tensor& targets, double cap) {
  return SoftCappedCrossEntropy::apply(logits, targets, cap);
}

}  // namespace stepwise::model
