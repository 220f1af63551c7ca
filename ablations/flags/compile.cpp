// compile (Raschka's step 8, Karpathy's third): forward, loss and backward captured once as a CUDA graph and replayed
// (the mechanism of torch.compile's reduce-overhead mode); the optimizer steps eagerly after each replay, as beside
// torch.compile(model) in both scripts. LibTorch has no Inductor for training, so no kernel is fused: the row shows
// what launch overhead costs. CUDA graphs need CUDA: on a CPU the flag is recorded as skipped. All of it is in
// bench/step/compile.cpp; the step chooses it in bench/step/train_step.cpp.
#include "ablations/flags.h"

namespace stepwise::ablations::flags {

const Flag compile{
    .name = "compile",
    .summary =
        "forward, loss and backward captured once as a CUDA graph and replayed (torch.compile's "
        "reduce-overhead); the optimizer steps eagerly after each replay, as beside torch.compile(model)",
    .reference = "eager execution, one kernel launch at a time",
    .stage = "step",
    .math = MathClass::Fp32,
    .applies = Applies::CudaOnly,
    .precondition = "a CUDA device (CUDA graphs)",
    .code = {"ablations/flags/compile.cpp", "bench/step/compile.cpp", "bench/step/train_step.cpp"},
    .apply = [](bench::RunConfig& c) { c.compile = true; },
};

}  // namespace stepwise::ablations::flags
