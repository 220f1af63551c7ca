// The training loss, kept in one place because of one choice: whether padded vocabulary logits take part.
#pragma once

#include <ATen/core/Tensor.h>

namespace stepwise::model {

// Mean cross-entropy over B*T positions. logits (B, T, V') with V' >= the real vocabulary; targets (B, T).
// Like the reference (Raschka's 01_opt_single_gpu.py and nanoGPT), the softmax runs over all V' logits,
// padded ones included: padded ids never occur as targets, so training only pushes their logits down.
at::Tensor cross_entropy(const at::Tensor& logits, const at::Tensor& targets);

}  // namespace stepwise::model
