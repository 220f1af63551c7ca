// qk_norm (the speedrun's record #5): q and k are RMS-normalised over each head's dimensions, per token, with no
// learned scale, before the attention's dot products; the scale stays 1/sqrt(d_head). Another function on purpose,
// judged by time to target.
#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration qk_norm({
    .name = "qk_norm",
    .position = 240,
    .summary = "q and k RMS-normalised per head and token (no parameters) before attention",
    .reference = "q and k straight from their projection",
    .stage = "model",
    .math = MathClass::Learning,
    .applies = Applies::Both,
    .code = {"ablations/flags/qk_norm.cpp", "model/gpt.cpp", "model/config.cpp", "bench/python/model.py"},
    .apply = [](bench::RunConfig& c) { c.model.qk_norm(true); },
});

}  // namespace
}  // namespace stepwise::ablations
