// The TF32 and autocast guards set their mode and restore the previous one.
#include "bench/precision.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>

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

TEST(AutocastGuard, MatmulsRunInBf16InsideAndFloatOutside) {
  auto a = at::randn({8, 8}), b = at::randn({8, 8});
  {
    AutocastGuard autocast(c10::DeviceType::CPU, true);
    EXPECT_TRUE(at::autocast::is_autocast_enabled(c10::DeviceType::CPU));
    EXPECT_EQ(at::mm(a, b).scalar_type(), at::kBFloat16);
  }
  EXPECT_FALSE(at::autocast::is_autocast_enabled(c10::DeviceType::CPU));
  EXPECT_EQ(at::mm(a, b).scalar_type(), at::kFloat);
  {
    AutocastGuard disabled(c10::DeviceType::CPU, false);
    EXPECT_EQ(at::mm(a, b).scalar_type(), at::kFloat);
  }
}

}  // namespace
}  // namespace stepwise::bench
