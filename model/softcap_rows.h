// The fused softcap cross-entropy's inner loops, one row of logits at a time, compiled once per instruction set
// (model/CMakeLists.txt: DEFAULT, AVX2, AVX-512, as ATen compiles its own CPU kernels) so that ATen's Vectorized<float>
// is as wide as the CPU running it. Raw pointers only: the files compiled with wider instructions use nothing but
// Vectorized<float> (itself in a namespace per instruction set) and the C library, so no inline function compiled
// for AVX-512 can be chosen by the linker for code that runs on an AVX2 machine (tests/structure checks the objects).
#pragma once

#include <cstdint>

namespace stepwise::model::softcap_rows {

// One instruction set's two loops. `cap` is the softcap c; a row holds V float32 values.
struct Loops {
  // row[i] <- 2c sigmoid(2 row[i] / c) = c tanh(row[i] / c) + c, the shifted cap, in place; returns the row's
  // log-sum-exp of the shifted values (its max taken out first, as log_softmax does).
  float (*shifted_cap_log_sum_exp)(float* row, int64_t V, float cap);
  // row[i] <- g4 exp(row[i] - lse) s (1 - s), s = row[i] / 2c, in place: the gradient of the row's cross-entropy
  // without its target's term (g4 = 4 times the loss's gradient for this row; the 4 is the shifted cap's slope).
  void (*softmax_times_slope)(float* row, int64_t V, float lse, float g4, float cap);
};

// The loops compiled for each instruction set (defined in softcap_rows.cpp, once per set).
namespace DEFAULT {
extern const Loops loops;
}
namespace AVX2 {
extern const Loops loops;
}
namespace AVX512 {
extern const Loops loops;
}

}  // namespace stepwise::model::softcap_rows
