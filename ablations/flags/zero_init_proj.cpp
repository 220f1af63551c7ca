// zero_init_proj (the speedrun's record #5): the attention's and the MLP's output projections start at zero, so every
// block is the identity at step 0 and the first loss is that of embeddings straight into the head. Another starting
// point on purpose, judged by time to target (model/gpt.cpp, after GPT-2's init).
#include "ablations/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration zero_init_proj({
    .name = "zero_init_proj",
    .position = 230,
    .summary = "the attention's and the MLP's output projections (c_proj) initialised to zero: every block starts "
               "as the identity",
    .reference = "GPT-2's init: c_proj drawn from N(0, 0.02 / sqrt(2 n_layer))",
    .stage = "model",
    .math = MathClass::Learning,
    .applies = Applies::Both,
    .code = {"ablations/flags/zero_init_proj.cpp", "model/gpt.cpp", "model/config.h", "bench/python/model.py"},
    .apply = [](bench::RunConfig& c) { c.model.zero_init_proj(true); },
});

}  // namespace
}  // namespace stepwise::ablations
