// soft_cap and its backward: the logit_softcap flag, applied where the logits become the loss (model/gpt.cpp's
// forward, and model/chunked_ce.cpp's chunks).
#include "model/softcap.h"

#include <ATen/ATen.h>

namespace stepwise::model {

at::Tensor soft_cap(const at::Tensor& logits, double cap) { return at::tanh(logits / cap) * cap; }

at::Tensor soft_cap_backward(const at::Tensor& grad_capped, const at::Tensor& tanh_of_scaled, double cap) {
  return at::tanh_backward(grad_capped * cap, tanh_of_scaled) / cap;
}

}  // namespace stepwise::model
