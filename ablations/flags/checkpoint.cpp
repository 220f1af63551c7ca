// checkpoint (torchtitan's activation checkpointing, llm.c's -r): memory freed for a larger batch at the price of a
// second forward. LibTorch has no torch.utils.checkpoint, so both modes are torch::autograd::Functions
// (model/recompute.cpp) that restore the generators' states, so dropout draws the same masks again. Selective on the
// hand-written layers sums a LayerNorm's input gradients in another order: the fp32 class.
#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration checkpoint({
    .name = "checkpoint",
    .position = 110,
    .summary = "activations recomputed in the backward instead of kept: full (each block keeps only its input) or "
               "selective (the LayerNorms and the GELU), per --checkpoint-mode",
    .reference = "every activation the backward needs kept from the forward",
    .stage = "model",
    .math = MathClass::Fp32,
    .applies = Applies::Both,
    .code = {"ablations/flags/checkpoint.cpp", "model/recompute.cpp", "model/gpt.cpp", "model/config.cpp"},
    .apply = [](bench::RunConfig& c) { c.model.checkpoint(true); },
    .options = {choice_option(
                    "checkpoint_mode", model::kCheckpointModeNames,
                    [](auto& c) -> auto& { return c.model.checkpoint_mode(); },
                    "with checkpoint: full keeps only each block's input and runs the block again in the "
                    "backward (torchtitan's full AC); selective recomputes the LayerNorms and the GELU and "
                    "keeps the matmul outputs (llm.c's -r 2)")
                    .in_suite_files()},
});

}  // namespace
}  // namespace stepwise::ablations
