// The micro-benchmarks' shared pieces: a fwd+bwd iteration leaves no gradient behind, as a training step's
// zero_grad(set_to_none) does, so the next iteration's backward assigns instead of accumulating.
#include "bench/micro/micro.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace stepwise::micro {
namespace {

TEST(MicroIteration, BackwardLeavesNoGradientToAccumulateInto) {
  auto x = at::randn({4, 8}).requires_grad_(true);
  auto w = at::randn({8, 8}).requires_grad_(true);
  for (int iteration = 0; iteration < 2; ++iteration) {
    at::linear(x, w).sum().backward();
    ASSERT_TRUE(x.grad().defined() && w.grad().defined());
    set_grads_to_none({x, w});
    EXPECT_FALSE(x.grad().defined());
    EXPECT_FALSE(w.grad().defined());
  }
}

}  // namespace
}  // namespace stepwise::micro
