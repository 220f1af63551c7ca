// Tf32Guard: set through the legacy switches so both precision views agree, restored entry by entry.
#include "bench/step/tf32.h"

namespace stepwise::bench {

Tf32Guard::Tf32Guard(bool tf32) {
  auto& ctx = at::globalContext();
  for (size_t i = 0; i < kOps.size(); ++i) saved_[i] = ctx.float32Precision(at::Float32Backend::CUDA, kOps[i]);
  ctx.setAllowTF32CuBLAS(tf32);
  ctx.setAllowTF32CuDNN(tf32);
}

Tf32Guard::~Tf32Guard() {
  auto& ctx = at::globalContext();
  // The legacy switches first, then the exact table entries (NONE, "fall back", is not the same value as IEEE).
  ctx.setAllowTF32CuBLAS(saved_[0] == at::Float32Precision::TF32);
  ctx.setAllowTF32CuDNN(saved_[1] == at::Float32Precision::TF32);
  for (size_t i = 0; i < kOps.size(); ++i) ctx.setFloat32Precision(at::Float32Backend::CUDA, kOps[i], saved_[i]);
}

}  // namespace stepwise::bench
