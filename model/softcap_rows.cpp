// softcap_rows.h's loops for the instruction set CPU_CAPABILITY names (model/CMakeLists.txt compiles this file once
// per set, with that set's compiler flags). Every loop reads and writes one row: a row of GPT-2's vocabulary is
// 200 KB, so the second pass over it (the sum after the max) reads it from cache.
#include "model/softcap_rows.h"

#include <ATen/cpu/vec/vec.h>

#include <cmath>
#include <limits>

namespace stepwise::model::softcap_rows::CPU_CAPABILITY {

namespace {

using Vec = at::vec::Vectorized<float>;

// exp_u20: within 2 ulp, the exponential ATen's own CPU flash attention takes for its softmax.
float shifted_cap_log_sum_exp(float* row, int64_t V, float cap) {
  const Vec minus_two_over_cap(-2.0f / cap), two_cap(2.0f * cap), one(1.0f);
  Vec top(-std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + Vec::size() <= V; i += Vec::size()) {
    const Vec shifted = two_cap / (one + (Vec::loadu(row + i) * minus_two_over_cap).exp_u20());
    shifted.store(row + i);
    top = at::vec::maximum(top, shifted);
  }
  float lanes[Vec::size()];
  top.store(lanes);
  float max = -std::numeric_limits<float>::infinity();
  for (float lane : lanes) max = std::max(max, lane);
  for (; i < V; ++i) {
    row[i] = 2.0f * cap / (1.0f + std::exp(row[i] * (-2.0f / cap)));
    max = std::max(max, row[i]);
  }
  const Vec vmax(max);
  Vec sum(0.0f);
  i = 0;
  for (; i + Vec::size() <= V; i += Vec::size()) sum = sum + (Vec::loadu(row + i) - vmax).exp_u20();
  sum.store(lanes);
  float total = 0;
  for (float lane : lanes) total += lane;
  for (; i < V; ++i) total += std::exp(row[i] - max);
  return max + std::log(total);
}

void softmax_times_slope(float* row, int64_t V, float lse, float g4, float cap) {
  const Vec vlse(lse), vg4(g4), half_over_cap(0.5f / cap), one(1.0f);
  int64_t i = 0;
  for (; i + Vec::size() <= V; i += Vec::size()) {
    const Vec shifted = Vec::loadu(row + i);
    const Vec s = shifted * half_over_cap;  // sigmoid(2 z / c), to its rounding
    ((shifted - vlse).exp_u20() * vg4 * s * (one - s)).store(row + i);
  }
  for (; i < V; ++i) {
    const float s = row[i] * (0.5f / cap);
    row[i] = std::exp(row[i] - lse) * g4 * s * (1.0f - s);
  }
}

}  // namespace

const Loops loops{shifted_cap_log_sum_exp, softmax_times_slope};

}  // namespace stepwise::model::softcap_rows::CPU_CAPABILITY
