// The logit_softcap flag (Gemma 2; the speedrun's record #9): logits squashed smoothly into (-cap, cap) before the
// cross-entropy, cap * tanh(logits / cap), which is the identity to first order near 0 (slope 1) and bounds how
// confident the model can become.
#pragma once

#include <ATen/core/Tensor.h>

namespace stepwise::model {

// d/dz of the shifted cap 2 c sigmoid(2 z / c): 2 c s (1 - s) 2 / c = 4 s (1 - s).
constexpr double kShiftedCapSlope = 4.0;

// cap * tanh(logits / cap), in the logits' dtype, the ops in the order the Python model runs them: the capped logits
// GPT::forward returns.
at::Tensor soft_cap(const at::Tensor& logits, double cap);

// What the losses compute instead: 2 cap sigmoid(2 logits / cap) = soft_cap(logits) + cap, the capped logits shifted
// by cap, in float32 whatever the logits' dtype. No softmax sees a shift (log_softmax(x + c) = log_softmax(x)), so the
// cross-entropy of these is soft_cap's within float32's rounding; and ATen's vectorised sigmoid costs a fraction of
// its tanh (the tanh was most of the cap's cost at GPT-2's vocabulary on an AVX-512 CPU: docs/flags.md). Float32
// because the shift moves the values away from 0, where bf16 would round them coarser than the logits themselves. The
// later records shift the cap the same way, 30 sigmoid(logits / 7.5) = 15 tanh(logits / 15) + 15, some on float32
// logits. A new (N, V) tensor, its ops in place after the first (for bf16 logits a copy to float32 first: one more
// elementwise pass than a cap in bf16 would make).
at::Tensor shifted_soft_cap(const at::Tensor& logits, double cap);

// The logits' gradient of the mean cross-entropy of shifted_soft_cap over a batch, in place of what its forward kept:
// `logp`, the shifted logits' log-probabilities (n, V), becomes it; `shifted` is consumed. `g` (0-dim, logp's dtype):
// the loss's gradient over the batch's rows. (softmax - onehot) g as log_softmax's backward forms it from nll_loss's,
// times the cap's derivative 4 s (1 - s) (at::sigmoid_backward), s = sigmoid(2 logits / cap) recovered in place as
// shifted / (2 cap). The 4 rides on g, so it takes no pass over (n, V) of its own.
at::Tensor shifted_soft_cap_cross_entropy_backward(at::Tensor logp, at::Tensor shifted, const at::Tensor& targets,
                                                   const at::Tensor& g, double cap);

// The training loss with logit_softcap, the cap fused with the cross-entropy (issue 57): mean over the N rows of
// -log softmax(soft_cap(logits))[target], for logits (N, V) and targets (N). Unfused, autograd kept a full (N, V)
// tensor for every op of the cap and of its backward (z / cap, tanh, * cap, then their three gradients): at the tiny
// preset (V = 50257) the cap cost as much as the rest of the step. On a CPU it is model/softcap_kernel.h's kernel,
// which writes the shifted cap over float32 logits and the gradient over the shifted cap: it consumes float32 logits
// (the caller's temporary; a leaf that requires grad is refused, and an op that saved them fails in its backward), and
// makes no (N, V) tensor (bf16 logits: one float32 copy). Elsewhere ATen's ops: shifted_soft_cap's tensor and its
// log-probabilities, turned into the gradient in place (shifted_soft_cap_cross_entropy_backward). The loss and its
// gradient are soft_cap's then cross_entropy_loss's within float32's rounding. The backward consumes what it saved,
// so it runs once per forward (a second, with retain_graph, fails autograd's version check).
// bench/python/model.py's SoftCappedCrossEntropy runs the same ops in the same order.
at::Tensor soft_capped_cross_entropy(const at::Tensor& logits, const at::Tensor& targets, double cap);

}  // namespace stepwise::model
