// Causality in every attention variant, and the SDPA backend guard's save/restore.
#include "model/gpt.h"
#include "model/sdpa.h"
#include "tests/support.h"

#include <ATen/Context.h>
#include <torch/cuda.h>
#include <torch/utils.h>

#include <gtest/gtest.h>

namespace stepwise::model {
namespace {

struct Variant {
  const char* name;
  GPTConfig config;
  bool needs_cuda;
};

std::vector<Variant> variants() {
  auto c = testing::small_config();
  return {
      {"stored_mask", c, false},
      {"dynamic_mask", GPTConfig(c).dynamic_mask(true), false},
      {"sdpa_auto", GPTConfig(c).flash(true), false},
      {"sdpa_math", GPTConfig(c).flash(true).sdpa_backend(SdpaBackend::Math), false},
      {"sdpa_flash", GPTConfig(c).flash(true).sdpa_backend(SdpaBackend::Flash), false},
      {"sdpa_efficient", GPTConfig(c).flash(true).sdpa_backend(SdpaBackend::Efficient), true},
      {"sdpa_cudnn", GPTConfig(c).flash(true).sdpa_backend(SdpaBackend::CuDnn), true},
  };
}

void PrintTo(const Variant& v, std::ostream* os) { *os << v.name; }

class Causality : public ::testing::TestWithParam<Variant> {};

TEST_P(Causality, TokensAfterPositionTLeaveEarlierLogitsUnchanged) {
  const auto& v = GetParam();
  auto device = testing::test_device();
  if (v.needs_cuda && !device.is_cuda()) GTEST_SKIP() << v.name << " is a CUDA-only SDPA backend";
  torch::manual_seed(0);
  GPT model(v.config);
  model->to(device);
  // The flash and cuDNN kernels need half precision on CUDA.
  if (device.is_cuda() && (v.config.sdpa_backend() == SdpaBackend::Flash || v.config.sdpa_backend() == SdpaBackend::CuDnn))
    model->to(at::kBFloat16);
  model->eval();
  const int64_t T = 16, t = 9;
  auto opts = at::TensorOptions().dtype(at::kLong).device(device);
  auto idx = at::randint(kGpt2VocabSize, {2, T}, opts);
  auto changed = idx.clone();
  changed.slice(1, t + 1, T).copy_(at::randint(kGpt2VocabSize, {2, T - t - 1}, opts));
  auto a = model->forward(idx), b = model->forward(changed);
  EXPECT_TRUE(at::equal(a.slice(1, 0, t + 1), b.slice(1, 0, t + 1))) << v.name << ": the future leaked into the past";
  // And the change does reach the later positions, so the test could fail.
  EXPECT_FALSE(at::allclose(a.slice(1, t + 1, T), b.slice(1, t + 1, T))) << v.name;
}

INSTANTIATE_TEST_SUITE_P(Model, Causality, ::testing::ValuesIn(variants()),
                         [](const auto& info) { return std::string(info.param.name); });

// The plan skips a configuration whose pinned backend has no kernel; the rule must agree with SDPA itself.
TEST(SdpaBackendUnavailable, AgreesWithWhatSdpaRuns) {
  const auto device = testing::test_device();
  for (auto backend : {SdpaBackend::Auto, SdpaBackend::Flash, SdpaBackend::Efficient, SdpaBackend::CuDnn,
                       SdpaBackend::Math})
    for (bool half : {false, true})
      for (double dropout : {0.0, 0.1}) {
        const auto dtype = half ? at::kBFloat16 : at::kFloat;
        auto q = at::randn({2, 4, 16, 16}, at::TensorOptions().dtype(dtype).device(device));  // (B, H, T, D)
        bool ran = true;
        try {
          SdpaBackendGuard pin(backend);
          at::scaled_dot_product_attention(q, q, q, {}, dropout, /*is_causal=*/true);
        } catch (const c10::Error&) {
          ran = false;
        }
        const auto why = sdpa_backend_unavailable(backend, device.is_cuda(), half, dropout);
        EXPECT_EQ(ran, !why) << to_string(backend) << (half ? " bf16" : " fp32") << " dropout " << dropout << ": "
                             << why.value_or("predicted to run");  // e.g. "fp32 dropout 0.1: has no dropout on CPU"
      }
}

TEST(SdpaBackendGuard, PinsOneBackendAndRestoresEveryFlag) {
  auto& ctx = at::globalContext();
  const bool flash = ctx.userEnabledFlashSDP(), efficient = ctx.userEnabledMemEfficientSDP();
  const bool math = ctx.userEnabledMathSDP(), cudnn = ctx.userEnabledCuDNNSDP();
  {
    SdpaBackendGuard pin(SdpaBackend::Math);
    EXPECT_TRUE(ctx.userEnabledMathSDP());
    EXPECT_FALSE(ctx.userEnabledFlashSDP());
    EXPECT_FALSE(ctx.userEnabledMemEfficientSDP());
    EXPECT_FALSE(ctx.userEnabledCuDNNSDP());
  }
  EXPECT_EQ(ctx.userEnabledFlashSDP(), flash);
  EXPECT_EQ(ctx.userEnabledMemEfficientSDP(), efficient);
  EXPECT_EQ(ctx.userEnabledMathSDP(), math);
  EXPECT_EQ(ctx.userEnabledCuDNNSDP(), cudnn);
}

TEST(SdpaBackendGuard, AutoChangesNothing) {
  auto& ctx = at::globalContext();
  const bool math = ctx.userEnabledMathSDP();
  ctx.setSDPUseMath(false);
  { SdpaBackendGuard pin(SdpaBackend::Auto); EXPECT_FALSE(ctx.userEnabledMathSDP()); }
  EXPECT_FALSE(ctx.userEnabledMathSDP());
  ctx.setSDPUseMath(math);
}

}  // namespace
}  // namespace stepwise::model
