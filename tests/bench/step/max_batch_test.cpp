// The probe's record decides the batch a measured run steps down to when the probed batch runs out of memory.
#include "bench/step/max_batch.h"

#include <gtest/gtest.h>

namespace stepwise::bench {
namespace {

TEST(SmallerFit, TheLargestBatchThatFitBelowTheOneThatFailed) {
  MaxBatchProbe probe;
  probe.tried = {{8, true, ""}, {16, true, ""}, {32, true, ""}, {64, false, "CUDA out of memory"}};
  EXPECT_EQ(smaller_fit(probe, 32), 16);
  EXPECT_EQ(smaller_fit(probe, 16), 8);
  EXPECT_EQ(smaller_fit(probe, 64), 32);
  EXPECT_FALSE(smaller_fit(probe, 8));  // the base batch: nothing smaller was tried
}

}  // namespace
}  // namespace stepwise::bench
