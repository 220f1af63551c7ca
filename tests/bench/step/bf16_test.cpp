// AutocastGuard: matmuls run in bf16 inside the scope and in float32 outside; a disabled guard changes nothing.
#include "bench/step/bf16.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>

#include <gtest/gtest.h>

namespace stepwise::bench {
namespace {

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
