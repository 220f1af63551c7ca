// tf32 (Raschka's step 2, Karpathy's first), set for the configuration's scope by bench/step/tf32.h and restored
// after, so a later configuration without it runs IEEE float32 again.
#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration tf32({
    .name = "tf32",
    .position = 20,
    .summary = "float32 matmuls and convolutions on TF32 tensor cores",
    .reference = "IEEE float32 matmuls",
    .stage = "backend",
    .math = MathClass::Fp32,
    .applies = Applies::CudaOnly,
    .precondition = "a CUDA device (tensor cores)",
    .code = {"ablations/flags/tf32.cpp", "bench/step/tf32.cpp", "bench/measure/runner.cpp"},
    .apply = [](bench::RunConfig& c) { c.tf32 = true; },
});

}  // namespace
}  // namespace stepwise::ablations
