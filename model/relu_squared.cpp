// relu_squared: relu2's activation as a torch::autograd::Function (model/relu_squared.h says why not autograd's own).
#include "model/relu_squared.h"

#include "model/number.h"

#include <torch/autograd.h>

namespace stepwise::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct ReluSquared : torch::autograd::Function<ReluSquared> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x) {
    at::Tensor r = at::relu(x);  // (B, T, 4C), kept for backward in place of x
    ctx->save_for_backward({r});
    return r * r;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const at::Tensor r = ctx->get_saved_variables()[0];
    return {(grads[0] * r).mul_(number(2.0))};  // d(r^2)/dx = 2 r, zero where x <= 0 as r is
  }
};

}  // namespace

at::Tensor relu_squared(const at::Tensor& x) { return ReluSquared::apply(x); }

}  // namespace stepwise::model
