// fp8 (torchtitan's Float8 training, the speedrun's FP8 head and MLP): the transformer's linear layers through FP8
// scaled matmuls (at::_scaled_mm) with dynamic scaling, as torchao's Float8Linear recipes do: --fp8-scaling picks
// tensorwise (the default) or rowwise, --fp8-head adds the output head. Each layer's three GEMMs (forward,
// grad_input, grad_weight) run in a torch::autograd::Function (model/fp8_linear.cpp); a layer whose GEMMs would be
// slower in FP8 stays in bf16 (torchtitan's small-GEMM filter), and each result lists the layers that ran in FP8
// (config.fp8_layers). FP8 tensor cores need compute capability 8.9 (Ada, Hopper): elsewhere, the CPU included, the
// flag is a planned skip. It needs bf16, whose autocast or pure weights feed the casts: without it the configuration
// is a planned skip that says so. It rounds every operand of those GEMMs to 3 or 2 mantissa bits: its own math class,
// whose tolerance tests/model/fp8_linear_test.cpp measures.
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
    .precondition = "a CUDA device of compute capability 8.9 or higher (FP8 tensor cores: Ada, Hopper), and bf16",
    .min_compute_capability = {8, 9},
    .code = {"ablations/flags/fp8.cpp", "model/fp8_linear.cpp", "model/gpt.cpp", "model/config.cpp"},
    .apply = [](bench::RunConfig& c) { c.model.fp8(true); },
    .unmet = [](const bench::RunConfig& c) -> std::optional<std::string> {
      if (!c.bf16) return std::string("fp8 needs bf16 (its casts start from bf16 activations): --enable=bf16,fp8");
      return std::nullopt;
    },
};

}  // namespace stepwise::ablations::flags
