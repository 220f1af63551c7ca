// dynamic_mask (Raschka's step 1): the causal mask built per forward for the current length, instead of the
// reference's stored (context, context) float buffer converted to bool on every forward. Its effect is one branch of
// the attention in model/gpt.cpp; it changes no arithmetic, only how the mask is made.
#include "ablations/flags.h"

namespace stepwise::ablations::flags {

const Flag dynamic_mask{
    .name = "dynamic_mask",
    .summary = "causal mask built per forward for the current length",
    .reference = "a stored context x context mask buffer, converted to bool on every forward",
    .stage = "model",
    .math = MathClass::Exact,
    .applies = Applies::Both,
    .code = {"ablations/flags/dynamic_mask.cpp", "model/gpt.cpp"},
    .apply = [](bench::RunConfig& c) { c.model.dynamic_mask(true); },
};

}  // namespace stepwise::ablations::flags
