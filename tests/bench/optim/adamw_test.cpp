// The four AdamW implementations give the same parameters after K steps on the same gradients, each within fp32
// rounding of torch::optim::AdamW.
#include "bench/optim/adamw.h"
#include "tests/support.h"

#include <torch/csrc/autograd/grad_mode.h>
#include <torch/utils.h>

#include <gtest/gtest.h>

namespace stepwise::bench {
namespace {

constexpr int kSteps = 10;

// A few parameters of different shapes; gradients are a fixed function of the step so every optimizer sees the
// same sequence.
std::vector<at::Tensor> make_params(at::ScalarType dtype, const c10::Device& device) {
  torch::manual_seed(0);
  std::vector<at::Tensor> params;
  for (auto shape : std::vector<std::vector<int64_t>>{{64, 32}, {32}, {7, 3, 5}})
    params.push_back(at::randn(shape).to(device, dtype).requires_grad_(true));  // same values in every dtype
  return params;
}

std::vector<at::Tensor> run(AdamWKind kind, at::ScalarType dtype, const c10::Device& device) {
  auto params = make_params(dtype, device);
  auto optimizer = make_adamw(kind, params, AdamWOptions().lr(1e-2));
  for (int step = 0; step < kSteps; ++step) {
    for (size_t i = 0; i < params.size(); ++i) {
      torch::manual_seed(1000 * step + static_cast<int>(i));
      params[i].mutable_grad() = at::randn(params[i].sizes()).to(params[i].options());
    }
    optimizer->step();
    optimizer->zero_grad();
    for (const auto& p : params) EXPECT_FALSE(p.grad().defined()) << "zero_grad sets gradients to none";
  }
  return params;
}

TEST(AdamW, AllImplementationsAgreeWithTheReferenceAfterKSteps) {
  const auto device = testing::test_device();
  const auto reference = run(AdamWKind::Reference, at::kFloat, device);
  for (const auto kind : {AdamWKind::Forloop, AdamWKind::Foreach, AdamWKind::Fused}) {
    const auto params = run(kind, at::kFloat, device);
    for (size_t i = 0; i < params.size(); ++i)
      EXPECT_TRUE(testing::all_close(params[i], reference[i], {1e-5, 1e-6})) << to_string(kind) << " parameter " << i;
  }
}

TEST(AdamW, TheUpdateActuallyMovesParameters) {
  const auto device = testing::test_device();
  const auto before = make_params(at::kFloat, device);
  const auto after = run(AdamWKind::Fused, at::kFloat, device);
  for (size_t i = 0; i < before.size(); ++i) EXPECT_FALSE(at::allclose(before[i], after[i]));
}

// Pure bf16 keeps 8 mantissa bits. The reference rounds m, v and the denominator to bf16 one op at a time while
// the fused kernel computes in float and rounds once, so each is compared with the float32 run, not each other.
TEST(AdamW, PureBf16ParametersTrackTheFloat32Update) {
  const auto device = testing::test_device();
  const auto exact = run(AdamWKind::Reference, at::kFloat, device);
  for (auto kind : {AdamWKind::Forloop, AdamWKind::Reference, AdamWKind::Foreach, AdamWKind::Fused}) {
    const auto params = run(kind, at::kBFloat16, device);
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_EQ(params[i].scalar_type(), at::kBFloat16);
      EXPECT_LT(testing::relative_error(params[i], exact[i]), 2e-2) << to_string(kind) << " parameter " << i;
    }
  }
}

TEST(AdamW, Names) {
  auto params = make_params(at::kFloat, testing::test_device());
  for (const auto kind : {AdamWKind::Forloop, AdamWKind::Reference, AdamWKind::Foreach, AdamWKind::Fused}) {
    EXPECT_EQ(make_adamw(kind, params, {})->name(), to_string(kind));
    EXPECT_EQ(adamw_kind_from_string(to_string(kind)), kind);
  }
  EXPECT_THROW(adamw_kind_from_string("adam"), std::invalid_argument);
}

TEST(AdamW, MissingGradientIsAnError) {
  auto params = make_params(at::kFloat, testing::test_device());
  auto optimizer = make_adamw(AdamWKind::Fused, params, {});
  EXPECT_THROW(optimizer->step(), std::runtime_error);
}

}  // namespace
}  // namespace stepwise::bench
