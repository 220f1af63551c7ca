// compile (Raschka's step 8, Karpathy's third): the mechanism of torch.compile's reduce-overhead mode. LibTorch has no
// Inductor for training, so no kernel is fused: the row shows what launch overhead costs, and the optimizer steps
// eagerly as beside torch.compile(model) in both scripts. The step chooses it in bench/step/train_step.cpp.
#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration compile({
    .name = "compile",
    .position = 80,
    .summary = "forward, loss and backward captured once as a CUDA graph and replayed (torch.compile's "
               "reduce-overhead); the optimizer steps eagerly after each replay, as beside torch.compile(model)",
    .reference = "eager execution, one kernel launch at a time",
    .stage = "step",
    .math = MathClass::Fp32,
    .applies = Applies::CudaOnly,
    .precondition = "a CUDA device (CUDA graphs)",
    .code = {"ablations/flags/compile.cpp", "bench/step/compile.cpp", "bench/step/train_step.cpp"},
    .apply = [](bench::RunConfig& c) { c.compile = true; },
});

}  // namespace
}  // namespace stepwise::ablations
