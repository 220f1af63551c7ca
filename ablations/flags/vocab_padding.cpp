// vocab_padding (Raschka's step 9, Karpathy's fifth): tensor-core-friendly shapes for the embedding and the output
// head. The padded ids never occur in the data; the loss still runs over their logits, as the reference's does.
// model/config.cpp sizes it, model/weights.cpp carries the shared rows.
#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration vocab_padding({
    .name = "vocab_padding",
    .position = 90,
    .summary = "vocabulary padded from 50257 to 50304 (next multiple of 64)",
    .reference = "the 50257-token vocabulary",
    .stage = "model",
    .math = MathClass::Fp32,
    .applies = Applies::Both,
    .code = {"ablations/flags/vocab_padding.cpp", "model/config.cpp", "model/gpt.cpp", "model/weights.cpp"},
    .apply = [](bench::RunConfig& c) { c.model.vocab_padding(true); },
});

}  // namespace
}  // namespace stepwise::ablations
