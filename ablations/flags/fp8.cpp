// fp8 (torchtitan's Float8 training, the speedrun's FP8 head and MLP), scaled dynamically as torchao's Float8Linear
// recipes do. Each layer's three GEMMs (forward, grad_input, grad_weight) run in a torch::autograd::Function
// (model/fp8_linear.cpp); a layer whose GEMMs would be slower in FP8 stays in bf16 (torchtitan's small-GEMM filter),
// and each result lists the layers that ran in FP8 (config.fp8_layers), so a row the filter kept in bf16 says so. It
// needs bf16 beside it, whose autocast or pure weights feed the casts: without it only fp8 is skipped, so
// leave-one-out's "all but bf16" is still measured. It rounds every operand of those GEMMs to 3 or 2 mantissa bits:
// its own math class, whose tolerance tests/model/fp8_linear_test.cpp measures.
#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration fp8({
    .name = "fp8",
    .position = 140,
    .summary = "the linear layers' GEMMs as FP8 scaled matmuls with dynamic scaling (tensorwise or rowwise, per "
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
    .options = {choice_option(
                    "fp8_scaling", model::kFp8ScalingNames, [](auto& c) -> auto& { return c.model.fp8_scaling(); },
                    "with fp8: torchao's Float8Linear recipes. tensorwise: one scale per tensor, e4m3 for input "
                    "and weight, e5m2 for the output's gradient; rowwise: a power-of-two scale per row along each "
                    "GEMM's contraction, e4m3 throughout")
                    .in_suite_files(),
                switch_option(
                    "fp8_head", [](auto& c) -> auto& { return c.model.fp8_head(); },
                    "with fp8: the output head in FP8 too (the speedrun's FP8 head), where the small-GEMM filter "
                    "lets it"),
                switch_option(
                    "fp8_every_layer", [](auto& c) -> auto& { return c.model.fp8_every_layer(); },
                    "with fp8: no small-GEMM filter; every linear whose sizes _scaled_mm takes runs in FP8 (to see "
                    "what the filter saves, or FP8 on a small model)")},
});

}  // namespace
}  // namespace stepwise::ablations
