// The logit_softcap flag (Gemma 2; the speedrun's record #9): logits squashed smoothly into (-cap, cap) before the
// cross-entropy, cap * tanh(logits / cap), which is the identity to first order near 0 (slope 1) and bounds how
// confident the model can become.
#pragma once

#include <ATen/core/Tensor.h>

namespace stepwise::model {

// cap * tanh(logits / cap), in the logits' dtype, the ops in the order the Python model runs them.
at::Tensor soft_cap(const at::Tensor& logits, double cap);

// For chunked_ce's hand-written backward: the gradient of the logits from that of the capped logits, given the tanh
// the forward computed (tanh(logits / cap)), as autograd differentiates soft_cap: cap, then tanh's derivative
// 1 - tanh^2, then 1 / cap.
at::Tensor soft_cap_backward(const at::Tensor& grad_capped, const at::Tensor& tanh_of_scaled, double cap);

}  // namespace stepwise::model
