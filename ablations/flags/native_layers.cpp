// native_layers (Raschka's step 6; Karpathy's model has them from the start): torch's LayerNorm and
// gelu(approximate="tanh") kernels instead of the reference's hand-written formulas. The same functions with the same
// parameters; the branches are in model/gpt.cpp.
#include "ablations/flags.h"

namespace stepwise::ablations::flags {

const Flag native_layers{
    .name = "native_layers",
    .summary = "torch's native LayerNorm and gelu(approximate=\"tanh\")",
    .reference = "hand-written LayerNorm and tanh-GELU formulas",
    .stage = "model",
    .math = MathClass::Fp32,
    .applies = Applies::Both,
    .code = {"ablations/flags/native_layers.cpp", "model/gpt.cpp"},
    .apply = [](bench::RunConfig& c) { c.model.native_layers(true); },
};

}  // namespace stepwise::ablations::flags
