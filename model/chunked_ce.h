// The chunked_ce flag: the output head and the cross-entropy computed a chunk of rows at a time, as Liger-Kernel's
// fused linear cross-entropy does, so neither the (B*T, V) logits nor their gradient ever exist whole: each chunk's
// logits are formed, turned into its loss and its gradient, and consumed (into the gradients of the hidden states and
// of the head's weight) before the next chunk's.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace stepwise::model {

// The fewest rows a chunk gets: each chunk's two matmuls read the whole (V, C) head weight, so below a few hundred rows
// they are bound by that read, not by arithmetic. Liger's rule alone gives 1-row chunks at the tiny preset (B*T 256,
// V 50257, C 64), measured 6-9x slower than the unchunked head on a CPU; 512-row chunks were faster than it.
constexpr int64_t kMinChunkRows = 256;

// Liger's chunk: B*T / ceil(V / C) rows rounded up to a power of two, so a chunk's logits are about as large as the
// hidden states (rows x V ~ B*T x C); at least kMinChunkRows.
int64_t chunked_ce_rows(int64_t rows, int64_t vocab, int64_t width);

// The mean cross-entropy of hidden (N, C) @ weight (V, C)^T against targets (N), over all V logits (padded ones too,
// as model::cross_entropy), `chunk_rows` rows at a time (0: chunked_ce_rows). Both gradients are formed during this
// forward, chunk by chunk, and kept until the backward scales them by the loss's gradient. Under autocast the head's
// matmuls run in its dtype and the log-softmax in float32, as at::linear and at::cross_entropy_loss do there.
// softcap > 0 (logit_softcap): each chunk's logits pass through soft_cap (model/softcap.h) before the log-softmax.
at::Tensor chunked_linear_cross_entropy(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets,
                                        int64_t chunk_rows = 0, double softcap = 0);

}  // namespace stepwise::model
