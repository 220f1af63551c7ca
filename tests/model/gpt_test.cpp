// The model's pieces against references computed independently in float64: LayerNorm and GELU in both forms where
// their constants are visible, the loss over the padded vocabulary, causality in every attention variant, and the
// SDPA backend guard's save/restore.
#include "model/gpt.h"
#include "model/sdpa.h"
#include "tests/support.h"

#include <ATen/Context.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/cuda.h>
#include <torch/utils.h>

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace stepwise::model {
namespace {

// ---------------------------------------------------------------- LayerNorm and GELU against float64 references

// GPT-2's LayerNorm, written out in float64 with its eps (1e-5) stated here, apart from the model's constant.
at::Tensor layer_norm_reference(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  constexpr double kGpt2LayerNormEps = 1e-5;
  auto x64 = x.to(at::kDouble);
  auto mean = x64.mean(-1, true);
  auto var = x64.var(-1, /*unbiased=*/false, /*keepdim=*/true);
  return (x64 - mean) / at::sqrt(var + kGpt2LayerNormEps) * weight.to(at::kDouble) + bias.to(at::kDouble);
}

// GPT-2's tanh approximation of GELU in float64, with its constants stated here.
at::Tensor gelu_tanh_reference(const at::Tensor& x) {
  auto x64 = x.to(at::kDouble);
  return 0.5 * x64 * (1.0 + at::tanh(std::sqrt(2.0 / std::numbers::pi) * (x64 + 0.044715 * at::pow(x64, 3))));
}

struct LayerCase {
  bool native;
  at::ScalarType dtype;
};

std::string layer_case_name(const ::testing::TestParamInfo<LayerCase>& info) {
  return std::string(info.param.native ? "native" : "formula") +
         (info.param.dtype == at::kBFloat16 ? "_bf16" : "_fp32");
}

class LayerNormForms : public ::testing::TestWithParam<LayerCase> {};

// Input whose variance (about 1e-5) is of the order of eps, where eps changes the output by a fifth (1e-6 instead
// of 1e-5 moves it by 0.22 relative); at PyTorch's default initialisation (variance about 2) an eps error is invisible.
// Measured floors against the float64 reference: 2.5e-6 relative in float32, 2.5e-3 in bf16.
TEST_P(LayerNormForms, ComputeGpt2sLayerNormWhereEpsIsVisible) {
  const auto [native, dtype] = GetParam();
  const double tol = dtype == at::kBFloat16 ? 5e-3 : 1e-5;  // about twice the measured floor
  torch::manual_seed(0);
  constexpr int64_t C = 64;
  LayerNorm ln(C, native);
  {
    torch::NoGradGuard no_grad;
    ln->weight.normal_();
    ln->bias.normal_();
  }
  ln->to(dtype);
  auto x = (3e-3 * at::randn({8, C})).to(dtype);  // (B, C), variance ~1e-5
  const auto expected = layer_norm_reference(x, ln->weight, ln->bias);
  EXPECT_LT(testing::relative_error(ln(x), expected), tol);
}

INSTANTIATE_TEST_SUITE_P(Model, LayerNormForms,
                         ::testing::Values(LayerCase{false, at::kFloat}, LayerCase{true, at::kFloat},
                                           LayerCase{false, at::kBFloat16}, LayerCase{true, at::kBFloat16}),
                         layer_case_name);

class GeluForms : public ::testing::TestWithParam<LayerCase> {};

// Over [-6, 6], where the tanh approximation and the exact (erf) GELU differ by up to 4.7e-4 (near |x| = 2) and by
// about a tenth relative for x in [-4, -2]. float32: measured floor 4.3e-7 absolute. bf16: the formula's 1 + tanh
// cancels for negative x (an absolute error of 9e-3, larger than the erf difference), so only the native form is
// checked there, relative to the value: measured floor 3.8e-3.
TEST_P(GeluForms, ComputeTheTanhApproximation) {
  const auto [native, dtype] = GetParam();
  auto x = at::linspace(-6, 6, 20001, at::kDouble).to(dtype);
  const auto expected = gelu_tanh_reference(x);
  const auto actual = gelu_tanh(x, native).to(at::kDouble);
  if (dtype == at::kFloat) {
    EXPECT_TRUE(testing::all_close(actual, expected, {0, 1e-6}));
  } else {
    const double worst = ((actual - expected).abs() / (expected.abs() + 1e-3)).max().item<double>();
    EXPECT_LT(worst, 8e-3);
  }
}

INSTANTIATE_TEST_SUITE_P(Model, GeluForms,
                         ::testing::Values(LayerCase{false, at::kFloat}, LayerCase{true, at::kFloat},
                                           LayerCase{true, at::kBFloat16}),
                         layer_case_name);

// ---------------------------------------------------------------- the loss over the padded vocabulary

// As the reference, the softmax runs over every logit the head produces, padded ones included: with vocab_padding the
// loss is not the loss over the real vocabulary. The padded columns are given large logits so leaving them out would
// change the loss by far more than rounding.
TEST(CrossEntropy, SoftmaxRunsOverEveryPaddedLogit) {
  torch::manual_seed(0);
  const int64_t padded = 50304, real = kGpt2VocabSize;
  auto logits = at::randn({2, 4, padded});  // (B, T, V_padded)
  logits.slice(-1, real, padded).add_(5.0);
  auto targets = at::randint(real, {2, 4}, at::kLong);
  auto flat = logits.reshape({-1, padded}).to(at::kDouble);
  auto picked = flat.gather(1, targets.reshape({-1, 1})).squeeze(1);
  const double expected = (at::logsumexp(flat, 1) - picked).mean().item<double>();
  const double real_only = (at::logsumexp(flat.slice(1, 0, real), 1) - picked).mean().item<double>();
  const double loss = cross_entropy(logits, targets).item<double>();
  EXPECT_NEAR(loss, expected, 1e-5);
  EXPECT_GT(std::abs(loss - real_only), 1e-2) << "the padded logits must enter the softmax";
}

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
  if (device.is_cuda() &&
      (v.config.sdpa_backend() == SdpaBackend::Flash || v.config.sdpa_backend() == SdpaBackend::CuDnn))
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

// The test-only break (STEPWISE_TEST_BREAK=future_token) really breaks causality, in both attention layouts: position t
// sees token t + 1, and in one layer no further (each further layer reaches one more token ahead).
TEST(Causality, TheTestOnlyBreakSeesExactlyOneTokenAhead) {
  for (bool flash : {false, true}) {
    torch::manual_seed(0);
    GPT model(testing::small_config().n_layer(1).flash(flash).test_sees_next_token(true));
    model->eval();
    const int64_t T = 16, t = 9;
    auto idx = at::randint(kGpt2VocabSize, {1, T}, at::kLong);
    auto next = idx.clone(), later = idx.clone();
    next.index_put_({0, t + 1}, (idx.index({0, t + 1}) + 1) % kGpt2VocabSize);
    later.index_put_({0, t + 2}, (idx.index({0, t + 2}) + 1) % kGpt2VocabSize);
    const auto a = model->forward(idx);
    EXPECT_FALSE(at::allclose(a.slice(1, t, t + 1), model->forward(next).slice(1, t, t + 1))) << "flash " << flash;
    EXPECT_TRUE(at::equal(a.slice(1, 0, t + 1), model->forward(later).slice(1, 0, t + 1))) << "flash " << flash;
  }
}

// The plan skips a configuration whose pinned backend has no kernel; the rule must agree with SDPA itself.
TEST(SdpaBackendUnavailable, AgreesWithWhatSdpaRuns) {
  const auto device = testing::test_device();
  for (auto backend :
       {SdpaBackend::Auto, SdpaBackend::Flash, SdpaBackend::Efficient, SdpaBackend::CuDnn, SdpaBackend::Math})
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
  {
    SdpaBackendGuard pin(SdpaBackend::Auto);
    EXPECT_FALSE(ctx.userEnabledMathSDP());
  }
  EXPECT_FALSE(ctx.userEnabledMathSDP());
  ctx.setSDPUseMath(math);
}

}  // namespace
}  // namespace stepwise::model
