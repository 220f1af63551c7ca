// zero_init_proj (the speedrun's record #5): the attention's and the MLP's output projections start at zero, so every
// block is the identity at step 0 and the first loss is that of embeddings straight into the head; with its
// zero_init_head option the untied head starts at zero too, as record #8's does. Another starting point on purpose,
// judged by time to target (model/gpt.cpp, after torch's default init of every layer, which the model keeps).
#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration zero_init_proj({
    .name = "zero_init_proj",
    .position = 230,
    .summary = "the attention's and the MLP's output projections (c_proj) initialised to zero: every block starts "
               "as the identity",
    .reference = "torch's default Linear init, which the model keeps for every c_proj: U(-1/sqrt(in), 1/sqrt(in))",
    .stage = "model",
    .math = MathClass::Learning,
    .applies = Applies::Both,
    .code = {"ablations/flags/zero_init_proj.cpp", "model/gpt.cpp", "model/config.h", "bench/python/model.py",
             "bench/python/request.py"},
    .apply = [](bench::RunConfig& c) { c.model.zero_init_proj(true); },
    .options = {switch_option(
                    "zero_init_head", [](auto& c) -> auto& { return c.model.zero_init_head(); },
                    "with zero_init_proj: the untied head (lm_head) starts at zero too, as record #8's does (the "
                    "first loss is then ln of the padded vocabulary)")
                    .in_suite_files()},
});

}  // namespace
}  // namespace stepwise::ablations
