// rotary (RoFormer's rotary position embeddings, the speedrun's record #2): each head's q and k are rotated by the
// token's position, base 10000, the halves of the head split rather than interleaved, v untouched; the learned
// position table is not built. Another function on purpose, judged by time to target (model/rotary.cpp).
#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration rotary({
    .name = "rotary",
    .position = 200,
    .summary = "rotary position embeddings on q and k (base 10000, halves rotated) instead of the learned position "
               "table, which is not built",
    .reference = "GPT-2's learned position table (wpe) added to the token embedding",
    .stage = "model",
    .math = MathClass::Learning,
    .applies = Applies::Both,
    .code = {"ablations/flags/rotary.cpp", "model/rotary.cpp", "model/gpt.cpp", "model/config.cpp",
             "bench/python/model.py"},
    .apply = [](bench::RunConfig& c) { c.model.rotary(true); },
});

}  // namespace
}  // namespace stepwise::ablations
