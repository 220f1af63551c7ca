// soft_cap, the shifted cap the losses compute and its backward, and the cap fused with the cross-entropy: the
// logit_softcap flag, applied where the logits become the loss (model/gpt.cpp's loss and forward, and
// model/chunked_ce.cpp's chunks).
#include "model/softcap.h"

#include "model/number.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/custom_function.h>

namespace stepwise::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The kernel's operators through the dispatcher, as the Python twin calls them (torch.ops.stepwise).
std::tuple<at::Tensor, at::Tensor> kernel_forward(at::Tensor& logits, const at::Tensor& targets, double cap) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("stepwise::shifted_cap_cross_entropy_", "")
                             .typed<std::tuple<at::Tensor, at::Tensor>(at::Tensor&, const at::Tensor&, double)>();
  return op.call(logits, targets, cap);
}

void kernel_backward(at::Tensor& shifted, const at::Tensor& lse, const at::Tensor& targets, const at::Tensor& grad,
                     double cap) {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("stepwise::shifted_cap_cross_entropy_backward_", "")
          .typed<void(at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, double)>();
  op.call(shifted, lse, targets, grad, cap);
}

struct SoftCappedCrossEntropy : torch::autograd::Function<SoftCappedCrossEntropy> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& logits, const at::Tensor& targets, double cap) {
    ctx->saved_data["dtype"] = static_cast<int64_t>(logits.scalar_type());
    ctx->saved_data["cap"] = cap;
    ctx->saved_data["kernel"] = logits.is_cpu();
    at::Tensor loss;
    if (logits.is_cpu()) {
      // float32 logits become their shifted cap in place (the caller's temporary, consumed); others a float32 copy.
      const bool in_place = logits.scalar_type() == at::kFloat && logits.is_contiguous();
      TORCH_CHECK(!in_place || !(logits.is_leaf() && logits.requires_grad()),
                  "soft_capped_cross_entropy consumes float32 logits (they become the shifted cap): pass a "
                  "temporary, not a leaf that requires grad");
      at::Tensor shifted = in_place ? logits : logits.to(at::kFloat).contiguous();  // (N, V), float32
      at::Tensor lse;
      std::tie(loss, lse) = kernel_forward(shifted, targets, cap);
      if (in_place) torch::autograd::impl::bump_version(logits);  // whatever else saved the logits now fails loudly
      ctx->save_for_backward({shifted, lse, targets});
    } else {
      at::Tensor shifted = shifted_soft_cap(logits, cap);  // (N, V), float32
      at::Tensor logp = at::log_softmax(shifted, 1);       // (N, V), float32
      ctx->save_for_backward({shifted, logp, targets});
      loss = at::nll_loss_nd(logp, targets);
    }
    // The loss in the dtype cross_entropy_loss gives: the logits' own, float32 under autocast; never a .to() of its
    // own dtype, as the Python twin, which torch.compile differentiates wrongly through that alias.
    const at::ScalarType loss_dtype =
        at::autocast::is_autocast_enabled(logits.device().type()) ? at::kFloat : logits.scalar_type();
    return loss.scalar_type() == loss_dtype ? loss : loss.to(loss_dtype);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    // A second backward (retain_graph) fails on autograd's own version check: the saved tensors changed.
    auto saved = ctx->get_saved_variables();
    const auto dtype = static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt());
    const double cap = ctx->saved_data["cap"].toDouble();
    if (ctx->saved_data["kernel"].toBool()) {
      kernel_backward(saved[0], saved[1], saved[2], grads[0], cap);  // the shifted cap becomes the gradient
      return {saved[0].to(dtype), at::Tensor(), at::Tensor()};
    }
    const int64_t N = saved[1].size(0);
    // The mean's share of the loss's gradient, in the saved tensors' float32.
    const at::Tensor g = grads[0].to(at::kFloat) / number(static_cast<double>(N));
    const at::Tensor grad = shifted_soft_cap_cross_entropy_backward(saved[1], saved[0], saved[2], g, cap);
    return {grad.to(dtype), at::Tensor(), at::Tensor()};
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
