// bf16 (Raschka's step 5, Karpathy's second). Raschka casts the whole model, so weights, gradients and AdamW state are
// bf16 too; nanoGPT and Karpathy keep fp32 weights under autocast: --bf16-mode picks either, so both tables can be
// measured as they were made.
#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration bf16({
    .name = "bf16",
    .position = 50,
    .summary = "bfloat16 compute: pure (weights cast) or autocast, per --bf16-mode",
    .reference = "float32 everywhere",
    .stage = "model",
    .math = MathClass::Bf16,
    .applies = Applies::Both,
    .code = {"ablations/flags/bf16.cpp", "bench/step/bf16.cpp", "bench/step/train_state.cpp",
             "bench/step/train_step.cpp", "bench/python/request.py", "bench/python/train_state.py",
             "bench/python/train_step.py", "bench/python/convergence.py"},
    .apply = [](bench::RunConfig& c) { c.bf16 = true; },
    .options = {choice_option(
                    "bf16_mode", bench::kBf16ModeNames, [](auto& c) -> auto& { return c.bf16_mode; },
                    "with bf16: pure casts weights, gradients and AdamW state to bf16 (Raschka's step 5); "
                    "autocast keeps fp32 weights and computes forward and loss under bf16 autocast (nanoGPT)")
                    .in_suite_files()},
});

}  // namespace
}  // namespace stepwise::ablations
