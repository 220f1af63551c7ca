// relu2 (Primer's squared ReLU, arXiv 2109.08668; the speedrun's record #5): the MLP's activation is relu(x)^2
// instead of GELU, the shapes unchanged. Another function on purpose, judged by time to target.
#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration relu2({
    .name = "relu2",
    .position = 220,
    .summary = "ReLU squared as the MLP's activation instead of GELU",
    .reference = "GELU (tanh approximation with native_layers, GPT-2's formula otherwise)",
    .stage = "model",
    .math = MathClass::Learning,
    .applies = Applies::Both,
    .code = {"ablations/flags/relu2.cpp", "model/gpt.cpp", "model/relu_squared.cpp", "model/config.cpp",
             "bench/python/model.py"},
    .apply = [](bench::RunConfig& c) { c.model.relu2(true); },
});

}  // namespace
}  // namespace stepwise::ablations
