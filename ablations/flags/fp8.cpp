// fp8 (torchtitan's Float8 training, the speedrun's FP8 head and MLP): the transformer's linear layers through FP8
// scaled matmuls (at::_scaled_mm) with dynamic scaling, as torchao's Float8Linear recipes do: --fp8-scaling picks
// tensorwise (the default) or rowwise, --fp8-head adds the output head. Each layer's three GEMMs (forward,
// grad_input, grad_weight) run in a torch::autograd::Function (model/fp8_linear.cpp); a layer whose GEMMs would be
// slower in FP8 stays in bf16 (torchtitan's small-GEMM filter), and each result lists the layers that ran in FP8
// (config.fp8_layers). FP8 tensor cores need compute capability 8.9 (Ada, Hopper): elsewhere, the CPU included, the
// flag is a planned skip. It needs bf16 beside it, whose autocast or pure weights feed the casts: without it fp8 is
// skipped with that reason and the rest of the configuration runs (leave-one-out's "all but bf16" is measured). It
// rounds every operand of those GEMMs to 3 or 2 mantissa bits: its own math class, whose tolerance
// tests/model/fp8_linear_test.cpp measures.
#include "ablations/flags.h"

namespace stepwise::ablations::flags {

const Flag fp8{
    .name = "fp8",
    .summary =
        "the linear layers' GEMMs as FP8 scaled matmuls with dynamic scaling (tensorwise or rowwise, per "
        "--fp8-scaling; the head too with --fp8-head); small GEMMs stay bf16",
    .reference = "every linear layer's GEMMs in the precision bf16 (or fp32) gives them",
    .stage = "model",
    .math = MathClass::Fp8,
    .applies = Applies::CudaOnly,
    .precondition = "a CUDA device of compute capability 8.9 or higher (FP8 tensor cores: Ada, Hopper)",
    .min_compute_capability = {8, 9},
    .needs = {"bf16"},
    .code = {"ablations/flags/fp8.cpp", "model/fp8_linear.cpp", "model/gpt.cpp", "model/config.cpp"},
    .apply = [](bench::RunConfig& c) { c.model.fp8(true); },
};

}  // namespace stepwise::ablations::flags
