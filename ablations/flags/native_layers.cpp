// native_layers (Raschka's step 6; Karpathy's model has them from the start): the same functions with the same
// parameters as the reference's hand-written formulas, in torch's kernels; the branches are in model/gpt.cpp.
#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration native_layers({
    .name = "native_layers",
    .position = 60,
    .summary = "torch's native LayerNorm and gelu(approximate=\"tanh\")",
    .reference = "hand-written LayerNorm and tanh-GELU formulas",
    .stage = "model",
    .math = MathClass::Fp32,
    .applies = Applies::Both,
    .code = {"ablations/flags/native_layers.cpp", "model/gpt.cpp"},
    .apply = [](bench::RunConfig& c) { c.model.native_layers(true); },
});

}  // namespace
}  // namespace stepwise::ablations
