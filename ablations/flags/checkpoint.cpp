// checkpoint (torchtitan's activation checkpointing, llm.c's -r): activations recomputed in the backward instead of
// kept, which frees memory for a larger batch at the price of a second forward. --checkpoint-mode=full keeps only each
// block's input and runs the block again in the backward; selective (llm.c's -r 2) recomputes the LayerNorms and the
// GELU and keeps the matmul outputs. Both are torch::autograd::Functions in model/recompute.cpp (LibTorch has no
// torch.utils.checkpoint) that restore the generators' states, so dropout draws the same masks again. Selective on the
// hand-written layers sums a LayerNorm's input gradients in another order: the fp32 class.
#include "ablations/flags.h"

namespace stepwise::ablations::flags {

const Flag checkpoint{
    .name = "checkpoint",
    .summary =
        "activations recomputed in the backward instead of kept: full (each block keeps only its input) or "
        "selective (the LayerNorms and the GELU), per --checkpoint-mode",
    .reference = "every activation the backward needs kept from the forward",
    .stage = "model",
    .math = MathClass::Fp32,
    .applies = Applies::Both,
    .code = {"ablations/flags/checkpoint.cpp", "model/recompute.cpp", "model/gpt.cpp", "model/config.cpp"},
    .apply = [](bench::RunConfig& c) { c.model.checkpoint(true); },
};

}  // namespace stepwise::ablations::flags
