// dynamic_mask (Raschka's step 1): the reference converts its stored float mask to bool on every forward; building the
// mask for the current length instead changes no arithmetic, only how the mask is made (one branch of the attention).
#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration dynamic_mask({
    .name = "dynamic_mask",
    .position = 10,
    .summary = "causal mask built per forward for the current length",
    .reference = "a stored context x context mask buffer, converted to bool on every forward",
    .stage = "model",
    .math = MathClass::Exact,
    .applies = Applies::Both,
    .code = {"ablations/flags/dynamic_mask.cpp", "model/gpt.cpp"},
    .apply = [](bench::RunConfig& c) { c.model.dynamic_mask(true); },
});

}  // namespace
}  // namespace stepwise::ablations
