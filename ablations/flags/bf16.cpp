// bf16 (Raschka's step 5, Karpathy's second): bfloat16 compute. --bf16-mode=pure casts the model, so weights,
// gradients and AdamW state are bf16 too (Raschka); autocast keeps fp32 weights and runs forward and loss under bf16
// autocast (nanoGPT, Karpathy). Both live in bench/step/bf16.cpp.
#include "ablations/flags.h"

namespace stepwise::ablations::flags {

const Flag bf16{
    .name = "bf16",
    .summary = "bfloat16 compute: pure (weights cast) or autocast, per --bf16-mode",
    .reference = "float32 everywhere",
    .stage = "model",
    .math = MathClass::Bf16,
    .applies = Applies::Both,
    .code = {"ablations/flags/bf16.cpp", "bench/step/bf16.cpp", "bench/step/train_state.cpp",
             "bench/step/train_step.cpp"},
    .apply = [](bench::RunConfig& c) { c.bf16 = true; },
};

}  // namespace stepwise::ablations::flags
