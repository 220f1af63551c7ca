// chunked_ce (Liger-Kernel's fused linear cross-entropy, llm.c's fused classifier): the output head and the
// cross-entropy computed a chunk of rows at a time, each chunk's logit gradient formed and consumed before the next,
// so the (B*T, V) logits and their gradient, the largest buffers of a GPT-2 step, never exist. Rows per chunk follow
// Liger's rule from B*T, V and the width, or --ce-chunk-rows. Plain ATen ops on every device (model/chunked_ce.cpp);
// the loss is summed in another order: the fp32 class.
#include "ablations/flags.h"

namespace stepwise::ablations::flags {

const Flag chunked_ce{
    .name = "chunked_ce",
    .summary =
        "output head and cross-entropy in chunks of rows (--ce-chunk-rows, default Liger's rule), never the whole "
        "(B*T, V) logits or their gradient",
    .reference = "the full (B*T, V) logits, then cross_entropy",
    .stage = "model",
    .math = MathClass::Fp32,
    .applies = Applies::Both,
    .code = {"ablations/flags/chunked_ce.cpp", "model/chunked_ce.cpp", "model/gpt.cpp", "model/config.cpp"},
    .apply = [](bench::RunConfig& c) { c.model.chunked_ce(true); },
};

}  // namespace stepwise::ablations::flags
