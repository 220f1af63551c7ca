// tf32 (Raschka's step 2, Karpathy's first): float32 matmuls and convolutions on TF32 tensor cores, set for the
// configuration's scope by bench/step/tf32.h. Tensor cores exist only on CUDA: on a CPU the flag is recorded as
// skipped.
#include "ablations/flags.h"

namespace stepwise::ablations::flags {

const Flag tf32{
    .name = "tf32",
    .summary = "float32 matmuls and convolutions on TF32 tensor cores",
    .reference = "IEEE float32 matmuls",
    .stage = "backend",
    .math = MathClass::Fp32,
    .applies = Applies::CudaOnly,
    .precondition = "a CUDA device (tensor cores)",
    .code = {"ablations/flags/tf32.cpp", "bench/step/tf32.cpp", "bench/measure/runner.cpp"},
    .apply = [](bench::RunConfig& c) { c.tf32 = true; },
};

}  // namespace stepwise::ablations::flags
