// soft_cap and its backward: the logit_softcap flag, applied where the logits become the loss (model/gpt.cpp's
// forward, and model/chunked_ce.cpp's chunks).
#include "model/softcap.h"

#include "model/number.h"

#include <ATen/ATen.h>

namespace stepwise::model {

// The cap goes in as Python's `logits / cap` passes it (model/number.h): one aten::div and one aten::mul.
at::Tensor soft_cap(const at::Tensor& logits, double cap) { return at::tanh(logits / number(cap)) * number(cap); }

at::Tensor soft_cap_backward(const at::Tensor& grad_capped, const at::Tensor& tanh_of_scaled, double cap) {
  return at::tanh_backward(grad_capped * cap, tanh_of_scaled) / cap;
}

}  // namespace stepwise::model
