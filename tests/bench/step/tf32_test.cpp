// Tf32Guard sets TF32 (in both the legacy switches and the precision table) or IEEE, and restores what was there.
#include "bench/step/tf32.h"

#include <gtest/gtest.h>

namespace stepwise::bench {
namespace {

TEST(Tf32Guard, SetsTf32OrIeeeAndRestores) {
  auto& ctx = at::globalContext();
  const auto before = ctx.float32Precision(at::Float32Backend::CUDA, at::Float32Op::MATMUL);
  {
    Tf32Guard on(true);
    EXPECT_EQ(ctx.float32Precision(at::Float32Backend::CUDA, at::Float32Op::MATMUL), at::Float32Precision::TF32);
    EXPECT_EQ(ctx.float32Precision(at::Float32Backend::CUDA, at::Float32Op::CONV), at::Float32Precision::TF32);
    // The legacy switches agree (their getters throw on a "mix of the legacy and new APIs").
    EXPECT_TRUE(ctx.allowTF32CuBLAS());
    EXPECT_TRUE(ctx.allowTF32CuDNN());
    EXPECT_EQ(ctx.float32MatmulPrecision(), at::Float32MatmulPrecision::HIGH);
    {
      Tf32Guard off(false);
      EXPECT_NE(ctx.float32Precision(at::Float32Backend::CUDA, at::Float32Op::MATMUL), at::Float32Precision::TF32);
      EXPECT_FALSE(ctx.allowTF32CuBLAS());
      EXPECT_FALSE(ctx.allowTF32CuDNN());
    }
    EXPECT_EQ(ctx.float32Precision(at::Float32Backend::CUDA, at::Float32Op::MATMUL), at::Float32Precision::TF32);
  }
  EXPECT_EQ(ctx.float32Precision(at::Float32Backend::CUDA, at::Float32Op::MATMUL), before);
}

}  // namespace
}  // namespace stepwise::bench
