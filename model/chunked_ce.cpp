// chunked_linear_cross_entropy: a torch::autograd::Function whose forward walks the rows a chunk at a time, forming
// each chunk's logits, its share of the loss and its gradient, and consuming that gradient at once.
#include "model/chunked_ce.h"

#include "model/softcap.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>

namespace stepwise::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct ChunkedLinearCrossEntropy : torch::autograd::Function<ChunkedLinearCrossEntropy> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& hidden, const at::Tensor& weight,
                               const at::Tensor& targets, int64_t chunk_rows, double softcap) {
    const int64_t N = hidden.size(0);
    const double inv_rows = 1.0 / static_cast<double>(N);
    at::Tensor grad_hidden = at::empty_like(hidden);                                         // (N, C)
    at::Tensor grad_weight = at::zeros(weight.sizes(), weight.options().dtype(at::kFloat));  // (V, C), summed in fp32
    at::Tensor picked_sum;  // sum of the targets' log-probabilities
    // The loss in the dtype cross_entropy_loss gives: the head's, float32 under autocast.
    const at::ScalarType loss_dtype =
        at::autocast::is_autocast_enabled(hidden.device().type()) ? at::kFloat : weight.scalar_type();
    for (int64_t start = 0; start < N; start += chunk_rows) {
      const int64_t end = std::min(N, start + chunk_rows);
      const at::Tensor h = hidden.slice(0, start, end);   // (n, C)
      const at::Tensor t = targets.slice(0, start, end);  // (n)
      at::Tensor logits = at::linear(h, weight);          // (n, V): the head's dtype (bf16 under autocast)
      // logit_softcap: the shifted cap (float32), which its backward consumes
      at::Tensor shifted = softcap > 0 ? shifted_soft_cap(logits, softcap) : at::Tensor();
      at::Tensor logp =
          at::log_softmax(softcap > 0 ? shifted : logits, 1);  // float32 under autocast, as cross_entropy_loss
      const at::Tensor index = t.unsqueeze(1);
      const at::Tensor picked = logp.gather(1, index).sum(at::kDouble);
      picked_sum = picked_sum.defined() ? picked_sum + picked : picked;
      // d(mean loss)/d(logits) = softmax / N - onehot(target) / N, formed in place of the log-probabilities, as
      // log_softmax's backward forms it from nll_loss's -1/N.
      at::Tensor grad;
      if (softcap > 0) {
        grad = shifted_soft_cap_cross_entropy_backward(logp, shifted, t, at::scalar_tensor(inv_rows, logp.options()),
                                                       softcap);
      } else {
        grad = logp.exp_().mul_(inv_rows);
        grad.scatter_add_(1, index, at::full({end - start, 1}, -inv_rows, grad.options()));
      }
      const at::Tensor grad_logits = grad.to(logits.scalar_type());  // cast back, as ToCopyBackward does
      logits = at::Tensor();
      grad_hidden.slice(0, start, end).copy_(at::mm(grad_logits, weight));
      grad_weight.add_(at::mm(grad_logits.t(), h));
    }
    ctx->save_for_backward({grad_hidden, grad_weight.to(weight.scalar_type())});
    return {(picked_sum * -inv_rows).to(loss_dtype)};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& scale = grads[0];  // the loss's gradient: 1 when it is the loss that is backpropagated
    return {saved[0] * scale.to(saved[0].scalar_type()), saved[1] * scale.to(saved[1].scalar_type()), at::Tensor(),
            at::Tensor(), at::Tensor()};
  }
};

}  // namespace

int64_t chunked_ce_rows(int64_t rows, int64_t vocab, int64_t width) {
  const int64_t factor = (vocab + width - 1) / width;  // ceil(V / C)
  const int64_t wanted = std::max((rows + factor - 1) / factor, kMinChunkRows);
  int64_t chunk = 1;
  while (chunk < wanted) chunk <<= 1;
  return chunk;
}

at::Tensor chunked_linear_cross_entropy(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets,
                                        int64_t chunk_rows, double softcap) {
  const int64_t rows = chunk_rows > 0 ? chunk_rows : chunked_ce_rows(hidden.size(0), weight.size(0), weight.size(1));
  return ChunkedLinearCrossEntropy::apply(hidden, weight, targets, rows, softcap)[0];
}

}  // namespace stepwise::model
