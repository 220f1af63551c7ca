// The logit_softcap flag (Gemma 2; the speedrun's record #9): logits squashed smoothly into (-cap, cap) before the
// cross-entropy, cap * tanh(logits / cap), which is the identity to first order near 0 (slope 1) and bounds how
// confident the model can become.
#pragma once

#include <ATen/core/Tensor.h>

namespace stepwise::model {

// cap * tanh(logits / cap), in the logits' dtype, the ops in the order the Python model runs them.
at::Tensor soft_cap(const at::Tensor& logits, double cap);

// The training loss with logit_softcap, the cap fused with the cross-entropy (issue 57): mean over the N rows of
// -log softmax(soft_cap(logits))[target], for logits (N, V) and targets (N). Unfused, autograd kept a full (N, V)
// tensor for every op of the cap and of its backward (z / cap, tanh, * cap, then their three gradients): at the tiny
// preset (V = 50257) the cap cost as much as the rest of the step. Here the forward makes the capped logits in one
// (N, V) tensor, in place after z / cap, and their log-probabilities, the loss being soft_cap's then
// cross_entropy_loss's to the bit; the backward turns the saved log-probabilities into the logits' gradient in place,
// (softmax - onehot) g / N times the cap's derivative 1 - tanh^2 (at::tanh_backward), the tanh recovered in place as
// capped / cap, with no (N, V) tensor of its own: one fewer than the plain cross-entropy's. So its gradient skips the
// unfused chain's * cap and / cap and rounds the tanh once more: the same function within float32's rounding. The
// backward consumes what it saved, so it runs once per forward (a second, with retain_graph, fails autograd's version
// check). bench/python/model.py's SoftCappedCrossEntropy runs the same ops in the same order.
at::Tensor soft_capped_cross_entropy(const at::Tensor& logits, const at::Tensor& targets, double cap);

// For chunked_ce's hand-written backward: the gradient of the logits from that of the capped logits, given the tanh
// the forward computed (tanh(logits / cap)), as autograd differentiates soft_cap: cap, then tanh's derivative
// 1 - tanh^2, then 1 / cap.
at::Tensor soft_cap_backward(const at::Tensor& grad_capped, const at::Tensor& tanh_of_scaled, double cap);

}  // namespace stepwise::model
