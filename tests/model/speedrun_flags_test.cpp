// The speedrun's other model flags against the spec's invariants: qk_norm (unit RMS per head, logits bounded by
// sqrt(D), either order with rotary), relu2 (its formula and derivative, in the MLP), zero_init_proj (every block the
// identity at step 0, the step-0 loss, which gradients are zero), logit_softcap (bounded, the identity to first order,
// in the forward, fused with the cross-entropy and in chunked_ce); and all of them on both attention layouts, native or
// hand-written layers, dynamic mask, vocab padding, in fp32, bf16 and with fp8, computing one function.
#include "bench/step/bf16.h"
#include "model/chunked_ce.h"
#include "model/gpt.h"
#include "model/relu_squared.h"
#include "model/rotary.h"
#include "model/softcap.h"
#include "model/weights.h"
#include "tests/cpu_fp8.h"
#include "tests/support.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/utils.h>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <utility>

namespace stepwise::model {
namespace {

using testing::kBf16;
using testing::kFp32;
using testing::small_config;

// The flags that change the forward without changing the parameters' layout (zero_init_proj is tested on its own: it
// zeroes so much that most comparisons would hold for the wrong reasons).
GPTConfig speedrun_config() { return small_config().rotary(true).qk_norm(true).relu2(true).logit_softcap(true); }

// ---------------------------------------------------------------- qk_norm

TEST(QkNorm, EveryHeadVectorHasUnitRmsAndScoresAreBoundedBySqrtD) {
  torch::manual_seed(0);
  CausalSelfAttention attn(small_config().qk_norm(true));
  const int64_t D = small_config().head_dim();
  const auto q = 5 * at::randn({2, 4, 16, D}), k = 0.1 * at::randn({2, 4, 16, D});
  const auto [qn, kn] = attn->position_qk(q, k);
  for (const auto& t : {qn, kn}) {
    const auto rms = t.pow(2).mean(-1).sqrt();  // (B, H, T)
    // eps (float32's, 1.2e-7) moves a unit RMS by eps / (2 mean square): 6e-6 at k's mean square of 1e-2.
    EXPECT_TRUE(testing::all_close(rms, at::ones_like(rms), {0, 1e-4}));
  }
  const double worst =
      (at::matmul(qn, kn.transpose(2, 3)) / std::sqrt(static_cast<double>(D))).abs().max().item<double>();
  EXPECT_LE(worst, std::sqrt(static_cast<double>(D)) * (1 + 1e-5)) << "Cauchy-Schwarz on unit-RMS vectors";
}

TEST(QkNorm, NormalisingBeforeOrAfterTheRotationIsTheSame) {
  torch::manual_seed(0);
  CausalSelfAttention attn(small_config().qk_norm(true).rotary(true));
  const int64_t D = small_config().head_dim();
  const auto q = at::randn({2, 4, 16, D}), k = at::randn({2, 4, 16, D});
  const auto [qa, ka] = attn->position_qk(q, k);  // normalised, then rotated
  const auto [cos, sin] = std::apply(rotation_tables, rotary_tables(16, D, q.device()));
  EXPECT_TRUE(testing::all_close(qa, at::rms_norm(apply_rotary(q, cos, sin), {D}), kFp32));
  EXPECT_TRUE(testing::all_close(ka, at::rms_norm(apply_rotary(k, cos, sin), {D}), kFp32));
}

// Attention written out with q and k normalised and rotated: the module's output in both layouts.
TEST(QkNorm, BothLayoutsAttendWithNormalisedAndRotatedQAndK) {
  const int64_t B = 2, T = 16, C = 64, H = 4, D = 16;
  for (const bool flash : {false, true}) {
    torch::manual_seed(0);
    CausalSelfAttention attn(small_config().qk_norm(true).rotary(true).flash(flash));
    torch::NoGradGuard no_grad;
    const auto x = at::randn({B, T, C});
    const auto heads = [&](const at::Tensor& w) { return at::linear(x, w).view({B, T, H, D}).transpose(1, 2); };
    at::Tensor q, k, v;
    if (flash) {
      const auto w = attn->c_attn->weight.chunk(3, 0);
      q = heads(w[0]), k = heads(w[1]), v = heads(w[2]);
    } else {
      q = heads(attn->query->weight), k = heads(attn->key->weight), v = heads(attn->value->weight);
    }
    const auto [cos, sin] = std::apply(rotation_tables, rotary_tables(T, D, x.device()));
    q = apply_rotary(at::rms_norm(q, {D}), cos, sin);
    k = apply_rotary(at::rms_norm(k, {D}), cos, sin);
    auto scores = at::matmul(q, k.transpose(2, 3)) / std::sqrt(static_cast<double>(D));
    scores.masked_fill_(at::triu(at::ones({T, T}, at::kBool), 1), -INFINITY);
    const auto y = at::matmul(at::softmax(scores, -1), v).transpose(1, 2).reshape({B, T, C});
    EXPECT_TRUE(testing::all_close(attn(x), at::linear(y, attn->c_proj->weight, attn->c_proj->bias), kFp32))
        << (flash ? "flash" : "reference");
  }
}

// Counts the CPU allocations of at least `min_bytes` made while it lives: c10's CPU allocator wrapped (each block still
// comes from it and goes back through its own deleter), then put back.
class LargeAllocations final : public c10::Allocator {
 public:
  explicit LargeAllocations(size_t min_bytes) : min_bytes_(min_bytes), inner_(c10::GetCPUAllocator()) {
    c10::SetCPUAllocator(this, kPriority);
  }
  ~LargeAllocations() override { c10::SetCPUAllocator(inner_, kPriority); }
  c10::DataPtr allocate(size_t n) override {
    count += n >= min_bytes_;
    return inner_->allocate(n);
  }
  void copy_data(void* dest, const void* src, size_t n) const override { inner_->copy_data(dest, src, n); }
  c10::DeleterFnPtr raw_deleter() const override { return inner_->raw_deleter(); }
  int64_t count = 0;

 private:
  static constexpr uint8_t kPriority = 200;  // above any allocator the binary set
  size_t min_bytes_;
  c10::Allocator* inner_;
};

// ---------------------------------------------------------------- relu2

TEST(Relu2, IsReluSquaredWithDerivativeTwiceRelu) {
  const auto x = at::linspace(-3, 3, 61, at::kDouble).requires_grad_(true);
  const auto y = relu_squared(x);
  const auto positive = x.detach() > 0;
  EXPECT_TRUE(
      testing::all_close(y.detach(), at::where(positive, x.detach() * x.detach(), at::zeros_like(x)), {0, 1e-12}));
  y.sum().backward();
  EXPECT_TRUE(testing::all_close(x.grad(), 2 * at::relu(x.detach()), {0, 1e-12}));
}

// The autograd function is autograd's graph of square(relu(x)) to the bit, forward and backward, in float32 and bf16
// (zeros compared by value: where x <= 0 its gradient is g times a zero, signed as g is, where relu's threshold gives
// +0). Its backward makes one tensor of x's size, the gradient itself, where autograd's graph makes four.
TEST(Relu2, IsAutogradsSquareOfReluToTheBitWithOneTensorBackward) {
  for (const auto dtype : {at::kFloat, at::kBFloat16}) {
    torch::manual_seed(0);
    const auto x = at::randn({4, 16, 64}).to(dtype);
    const auto mine = x.clone().requires_grad_(true), autograds = x.clone().requires_grad_(true);
    const auto y = relu_squared(mine), expected = at::square(at::relu(autograds));
    EXPECT_TRUE(at::equal(y, expected)) << dtype;
    const auto grad = at::randn_like(y);
    y.backward(grad);
    expected.backward(grad);
    EXPECT_TRUE(at::equal(mine.grad() + 0.0, autograds.grad() + 0.0)) << dtype;
  }
  const auto backward_tensors = [](const std::function<at::Tensor(const at::Tensor&)>& f) {
    const auto x = at::randn({4, 16, 64}).requires_grad_(true);
    const auto y = f(x);
    const auto grad = at::randn_like(y);
    LargeAllocations large(x.numel() * sizeof(float));
    y.backward(grad);
    return large.count;
  };
  const int64_t autograds = backward_tensors([](const at::Tensor& x) { return at::square(at::relu(x)); });
  EXPECT_EQ(backward_tensors(relu_squared), 1) << "autograd's graph: " << autograds;
  EXPECT_GE(autograds, 4) << "the count sees autograd's tensors";
}

TEST(Relu2, TheMlpAppliesItBetweenItsProjections) {
  torch::manual_seed(0);
  MLP mlp(small_config().relu2(true));
  torch::NoGradGuard no_grad;
  const auto x = at::randn({2, 8, 64});
  const auto hidden = at::relu(at::linear(x, mlp->c_fc->weight, mlp->c_fc->bias));
  EXPECT_TRUE(testing::all_close(mlp(x), at::linear(hidden * hidden, mlp->c_proj->weight, mlp->c_proj->bias), kFp32));
}

// ---------------------------------------------------------------- zero_init_proj

TEST(ZeroInitProj, OnlyTheOutputProjectionsStartAtZero) {
  torch::manual_seed(0);
  GPT plain(small_config());
  torch::manual_seed(0);
  GPT zeroed(small_config().zero_init_proj(true));
  const auto expected = plain->named_parameters();
  for (const auto& item : zeroed->named_parameters()) {
    const bool proj = item.key().find(".c_proj.") != std::string::npos;
    if (proj)
      EXPECT_TRUE(at::equal(item.value(), at::zeros_like(item.value()))) << item.key();
    else
      EXPECT_TRUE(at::equal(item.value(), expected[item.key()])) << item.key() << ": drawn as without the flag";
  }
}

// At step 0 every block adds zero to the residual, so the model is embeddings -> ln_f -> head; with zero_init_head the
// head starts at zero too (record #8's), so the logits are all 0 and the loss is ln V exactly (the spec's ln 50257, and
// ln 50304 padded); every other weight is drawn as without the option.
TEST(ZeroInitProj, EveryBlockIsTheIdentityAtStepZero) {
  for (const bool flash : {false, true})
    for (const bool padded : {false, true}) {
      torch::manual_seed(0);
      GPT drawn(small_config().zero_init_proj(true).flash(flash).vocab_padding(padded));
      EXPECT_FALSE(at::equal(drawn->lm_head->weight, at::zeros_like(drawn->lm_head->weight)))
          << "the head is zero only with zero_init_head";
      torch::manual_seed(0);
      const auto config = small_config().zero_init_proj(true).zero_init_head(true).flash(flash).vocab_padding(padded);
      GPT model(config);
      EXPECT_TRUE(at::equal(model->lm_head->weight, at::zeros_like(model->lm_head->weight)));
      for (const auto& item : drawn->named_parameters())
        if (item.key() != "lm_head.weight")
          EXPECT_TRUE(at::equal(item.value(), model->named_parameters()[item.key()])) << item.key();
      const auto idx = at::randint(config.vocab_size(), {2, 16}, at::kLong);
      const auto targets = at::randint(config.vocab_size(), {2, 16}, at::kLong);
      {
        torch::NoGradGuard no_grad;
        const auto embedded = model->wte(idx) + model->wpe(at::arange(16));  // (B, T, C), no block applied
        EXPECT_TRUE(at::equal(model->hidden_states(idx), model->ln_f(embedded)));
      }
      const auto loss = model->loss(idx, targets);
      // float32's ln V: the log-softmax of V zeros, within a few units in the last place.
      EXPECT_FLOAT_EQ(loss.item<float>(),
                      static_cast<float>(std::log(static_cast<double>(config.padded_vocab_size()))));
      loss.backward();
      // With a zero head no gradient reaches the blocks or the embeddings: only the head's is non-zero.
      for (const auto& item : model->named_parameters()) {
        const bool head = item.key() == "lm_head.weight";
        EXPECT_EQ(item.value().grad().abs().sum().item<double>() > 0, head) << item.key();
      }
    }
}

// With the head as initialised: c_proj's gradients are not zero, but nothing before a zero c_proj gets any (the
// spec's (d)): q, k, v (or c_attn), c_fc and the LayerNorms inside the blocks.
TEST(ZeroInitProj, OnlyTheProjectionsInsideTheBlocksLearnAtStepZero) {
  torch::manual_seed(0);
  GPT model(small_config().zero_init_proj(true));
  const auto idx = at::randint(kGpt2VocabSize, {2, 16}, at::kLong);
  model->loss(idx, at::randint(kGpt2VocabSize, {2, 16}, at::kLong)).backward();
  for (const auto& item : model->named_parameters()) {
    const auto& name = item.key();
    if (name.rfind("h.", 0) != 0) continue;
    const bool proj = name.find(".c_proj.") != std::string::npos;
    EXPECT_EQ(item.value().grad().abs().sum().item<double>() > 0, proj) << name;
  }
}

// ---------------------------------------------------------------- logit_softcap

TEST(LogitSoftcap, BoundsTheLogitsAndIsTheIdentityToFirstOrderNearZero) {
  constexpr double kCap = 30;
  const auto raw = at::linspace(-1000, 1000, 2001);
  const auto capped = soft_cap(raw, kCap);
  EXPECT_LE(capped.abs().max().item<double>(), kCap);
  // Strictly inside where float32's tanh has not rounded to 1 (|x| < 5 cap: tanh 5 = 0.99991).
  const auto inside = raw.abs() < 5 * kCap;
  EXPECT_LT(capped.masked_select(inside).abs().max().item<double>(), kCap);
  EXPECT_EQ(soft_cap(at::zeros({1}), kCap).item<double>(), 0.0);
  // Slope 1 at 0: cap tanh(x / cap) = x - x^3 / (3 cap^2) + ..., 3.7e-10 off at x = 1e-3.
  const auto small = at::tensor({1e-3, -1e-3, 1e-2}, at::kDouble).requires_grad_(true);
  const auto y = soft_cap(small, kCap);
  EXPECT_TRUE(testing::all_close(y.detach(), small.detach(), {1e-6, 0}));
  y.sum().backward();
  EXPECT_TRUE(testing::all_close(small.grad(), at::ones_like(small), {0, 1e-6}));
}

TEST(LogitSoftcap, TheModelCapsItsLogitsInTrainingAndEvaluation) {
  torch::manual_seed(0);
  GPT plain(small_config()), capped(small_config().logit_softcap(true).softcap(2.0));
  copy_weights(plain, capped);
  const auto idx = at::randint(kGpt2VocabSize, {2, 16}, at::kLong);
  const auto targets = at::randint(kGpt2VocabSize, {2, 16}, at::kLong);
  for (const bool training : {true, false}) {
    plain->train(training);
    capped->train(training);
    torch::NoGradGuard no_grad;
    const auto expected = 2.0 * at::tanh(plain->forward(idx) / 2.0);
    EXPECT_TRUE(testing::all_close(capped->forward(idx), expected, kFp32));
    EXPECT_TRUE(testing::all_close(capped->loss(idx, targets), cross_entropy(expected, targets), kFp32));
  }
  EXPECT_THROW(small_config().logit_softcap(true).softcap(0).validate(), std::invalid_argument);
  EXPECT_THROW(small_config().logit_softcap(true).softcap(-1).validate(), std::invalid_argument);
}

// The losses' cap, 2 cap sigmoid(2 z / cap), is soft_cap shifted by cap, in float32 whatever the logits' dtype: within
// float32's rounding of values up to 2 cap.
TEST(LogitSoftcap, TheShiftedCapIsTheCapPlusCapInFloat32) {
  constexpr double kCap = 30;
  constexpr double kUlps = 2 * kCap * 4 * 0x1p-23;  // 4 units in the last place of 2 cap in float32
  const auto raw = at::linspace(-200, 200, 4001);
  for (const auto dtype : {at::kFloat, at::kBFloat16}) {
    const auto logits = raw.to(dtype);
    const auto shifted = shifted_soft_cap(logits, kCap);
    EXPECT_EQ(shifted.scalar_type(), at::kFloat) << c10::toString(dtype);
    const auto reference = soft_cap(logits.to(at::kDouble), kCap) + kCap;  // of the logits as rounded to dtype
    EXPECT_TRUE(testing::all_close(shifted, reference, {0, kUlps})) << c10::toString(dtype);
  }
  EXPECT_TRUE(at::equal(raw, at::linspace(-200, 200, 4001))) << "the logits are left as they were";
}

// The cap fused with the cross-entropy (what GPT::loss runs with logit_softcap; on a CPU the kernel of
// model/softcap_kernel.h) against soft_cap then cross_entropy_loss through autograd: the loss and the logits' gradient
// within float32's rounding (the fused loss computes the shifted cap with a sigmoid, the unfused one the cap with a
// tanh) or bf16's (the fused one computes in float32, the unfused one in bf16), in float32, pure bf16 and under bf16
// autocast. And it makes no (N, V) tensor in its forward and backward together for float32 logits (the shifted cap
// and then the gradient made in their place), where the cross-entropy without a cap makes three (the
// log-probabilities, and the backward's two) and the unfused cap six more.
TEST(LogitSoftcap, FusedWithTheCrossEntropyIsTheCapThenTheLossWithoutTheirTensors) {
  constexpr double kCap = 3.0;
  constexpr int64_t N = 37, V = 500;
  torch::manual_seed(0);
  const auto raw = 4 * at::randn({N, V});  // logits of a few caps: tanh bends them
  const auto targets = at::randint(V, {N}, at::kLong);
  for (const auto& [dtype, autocast] : {std::pair{at::kFloat, false}, {at::kBFloat16, false}, {at::kBFloat16, true}}) {
    const std::string what = std::string(c10::toString(dtype)) + (autocast ? " autocast" : "");
    const auto logits = raw.to(dtype, false, /*copy=*/true).requires_grad_(true);
    const auto unfused_logits = raw.to(dtype, false, /*copy=*/true).requires_grad_(true);
    at::Tensor fused, unfused;
    {
      bench::AutocastGuard guard(c10::kCPU, autocast);
      fused = soft_capped_cross_entropy(logits.clone(), targets, kCap);  // a temporary, as the model's logits
      unfused = at::cross_entropy_loss(soft_cap(unfused_logits, kCap), targets);
    }
    EXPECT_EQ(fused.scalar_type(), unfused.scalar_type()) << what;
    const double rtol = dtype == at::kFloat ? 1e-6 : 1e-2;
    EXPECT_TRUE(testing::all_close(fused.detach(), unfused.detach(), {rtol, 0})) << what;
    fused.backward();
    unfused.backward();
    EXPECT_EQ(logits.grad().scalar_type(), dtype) << what;
    EXPECT_LT(testing::relative_error(logits.grad(), unfused_logits.grad()), rtol) << what;
  }
  // The logits made before the count starts, as the head's matmul makes them, and held by nothing but the loss.
  const auto count = [&](const std::function<at::Tensor(at::Tensor)>& loss) {
    const auto leaf = raw.clone().requires_grad_(true);
    at::Tensor logits = leaf.clone();  // (N, V)
    LargeAllocations large(N * V * sizeof(float));
    loss(std::move(logits)).backward();
    return large.count;
  };
  const int64_t fused = count([&](at::Tensor x) { return soft_capped_cross_entropy(x, targets, kCap); });
  const int64_t plain = count([&](at::Tensor x) { return at::cross_entropy_loss(x, targets); });
  const int64_t unfused = count([&](at::Tensor x) { return at::cross_entropy_loss(soft_cap(x, kCap), targets); });
  EXPECT_EQ(fused, 0) << "plain: " << plain << ", unfused: " << unfused;  // the cap and the gradient made in place
  EXPECT_GT(plain, 0) << "the count sees the cross-entropy's tensors";
  EXPECT_GT(unfused, plain) << "the count sees the unfused cap's tensors";
}

// chunked_ce's hand-written softcap backward against autograd's through soft_cap and the cross-entropy.
TEST(LogitSoftcap, ChunkedCrossEntropyCapsEachChunkAndDifferentiatesIt) {
  torch::manual_seed(0);
  const auto hidden = at::randn({37, 64}).requires_grad_(true);
  const auto weight = (0.5 * at::randn({500, 64})).requires_grad_(true);  // logits of a few units: the cap bends them
  const auto targets = at::randint(500, {37}, at::kLong);
  const auto expected = at::cross_entropy_loss(soft_cap(at::linear(hidden, weight), 3.0), targets);
  expected.backward();
  const auto grad_hidden = hidden.grad().clone(), grad_weight = weight.grad().clone();
  hidden.mutable_grad().reset();
  weight.mutable_grad().reset();
  const auto chunked = chunked_linear_cross_entropy(hidden, weight, targets, /*chunk_rows=*/8, /*softcap=*/3.0);
  chunked.backward();
  EXPECT_TRUE(testing::all_close(chunked, expected, kFp32));
  EXPECT_LT(testing::relative_error(hidden.grad(), grad_hidden), 1e-5);
  EXPECT_LT(testing::relative_error(weight.grad(), grad_weight), 1e-5);
}

// ---------------------------------------------------------------- with the other model flags

struct LayoutCase {
  const char* name;
  std::function<void(GPTConfig&)> turn_on;
  at::ScalarType dtype;
};

void PrintTo(const LayoutCase& c, std::ostream* os) { *os << c.name; }

class SpeedrunFlagsOnEveryLayout : public ::testing::TestWithParam<LayoutCase> {};

// The speedrun's flags on the reference layout against the same flags on each other layout (weights carried over):
// the same logits and gradients, as tests/model/flag_equivalence_test.cpp holds the layouts to without them. Measured
// worst relative gradient error: 6.7e-7 in fp32, 1.7e-2 in bf16 (all four); the bounds are flag_equivalence's.
TEST_P(SpeedrunFlagsOnEveryLayout, SameLogitsAndGradients) {
  const auto& c = GetParam();
  const bool bf16 = c.dtype == at::kBFloat16;
  torch::manual_seed(0);
  const GPTConfig reference_config = speedrun_config();
  GPTConfig variant_config = speedrun_config();
  c.turn_on(variant_config);
  GPT reference(reference_config), variant(variant_config);
  copy_weights(reference, variant);
  for (GPT* m : {&reference, &variant}) (*m)->to(c.dtype);
  const int64_t V = reference_config.vocab_size();
  const auto idx = at::randint(V, {2, 16}, at::kLong), targets = at::randint(V, {2, 16}, at::kLong);
  const auto ref_logits = reference->forward(idx), var_logits = variant->forward(idx).slice(-1, 0, V);
  EXPECT_TRUE(testing::all_close(var_logits, ref_logits, bf16 ? kBf16 : kFp32));
  cross_entropy(ref_logits.to(at::kFloat), targets).backward();
  cross_entropy(var_logits.to(at::kFloat), targets).backward();
  // The variant's gradients in the reference layout (fused QKV split, padded rows dropped).
  GPT holder(variant_config), grads(reference_config);
  {
    torch::NoGradGuard no_grad;
    auto into = holder->named_parameters();
    for (const auto& item : variant->named_parameters()) into[item.key()].copy_(item.value().grad());
    copy_weights(holder, grads);
  }
  const auto expected = reference->named_parameters();
  for (const auto& item : grads->named_parameters())
    EXPECT_LT(testing::relative_error(item.value(), expected[item.key()].grad()), bf16 ? 5.5e-2 : 1e-5)
        << c.name << ": " << item.key();
}

std::vector<LayoutCase> layout_cases() {
  const std::vector<std::pair<const char*, std::function<void(GPTConfig&)>>> layouts{
      {"flash", [](GPTConfig& g) { g.flash(true); }},
      {"native_layers", [](GPTConfig& g) { g.native_layers(true); }},
      {"dynamic_mask", [](GPTConfig& g) { g.dynamic_mask(true); }},
      {"vocab_padding", [](GPTConfig& g) { g.vocab_padding(true); }},
      {"all_four", [](GPTConfig& g) { g.flash(true).native_layers(true).dynamic_mask(true).vocab_padding(true); }},
  };
  std::vector<LayoutCase> cases;
  for (const auto& [name, fn] : layouts)
    for (const auto dtype : {at::kFloat, at::kBFloat16}) cases.push_back({name, fn, dtype});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Model, SpeedrunFlagsOnEveryLayout, ::testing::ValuesIn(layout_cases()),
                         [](const ::testing::TestParamInfo<LayoutCase>& info) {
                           return std::string(info.param.name) +
                                  (info.param.dtype == at::kBFloat16 ? "_bf16" : "_fp32");
                         });

// fp8 on every linear and the head, with the speedrun's flags, against the same model in bf16 (pure and autocast), in
// both layouts: within fp8_linear_test's tolerances of the plain model, over its vocabulary of 1,000 (the FP8 head's
// GEMMs run in oneDNN's reference kernel on a CPU; GPT-2's width made this test minutes long). Measured on this CPU:
// the loss one bf16 step (2^-5 near ln 1000) off in pure bf16 and 4.3e-4 to 8.8e-4 under autocast, the logits
// 4.4e-2 relative, the worst gradient 1.3e-1 relative.
constexpr int64_t kFp8Vocab = 1000;

TEST(SpeedrunFlags, ComposeWithFp8WithinItsTolerance) {
  if (const auto missing = testing::cpu_fp8_missing()) GTEST_SKIP() << *missing;
  for (const bool autocast : {false, true})
    for (const bool flash : {false, true}) {
      const GPTConfig plain = speedrun_config().vocab_size(kFp8Vocab).vocab_padding(true).flash(flash);
      const GPTConfig fp8 = GPTConfig(plain).fp8(true).fp8_every_layer(true).fp8_head(true);
      torch::manual_seed(0);
      GPT reference(plain), variant(fp8);
      copy_weights(reference, variant);
      if (!autocast)
        for (GPT* m : {&reference, &variant}) (*m)->to(at::kBFloat16);
      const auto idx = at::randint(plain.vocab_size(), {4, 32}, at::kLong);
      const auto targets = at::randint(plain.vocab_size(), {4, 32}, at::kLong);
      at::Tensor losses[2], logits[2];
      for (int i = 0; i < 2; ++i) {
        GPT& m = i == 0 ? reference : variant;
        bench::AutocastGuard guard(c10::kCPU, autocast);
        {
          torch::NoGradGuard no_grad;
          logits[i] = m->forward(idx);
        }
        losses[i] = m->loss(idx, targets);
      }
      for (auto& l : losses) l.backward();
      const std::string what = std::string(autocast ? "autocast" : "pure bf16") + (flash ? " flash" : "");
      EXPECT_LE(logits[1].abs().max().item<double>(), plain.softcap()) << what;
      const double loss_tolerance = autocast ? 2e-3 : 0x1p-5 + 1e-9;  // pure bf16: one bf16 step at the loss
      EXPECT_LT(std::abs(losses[1].item<double>() - losses[0].item<double>()), loss_tolerance) << what;
      EXPECT_LT(testing::relative_error(logits[1], logits[0]), 8e-2) << what;
      const auto grads = reference->named_parameters();
      for (const auto& item : variant->named_parameters())
        EXPECT_LT(testing::relative_error(item.value().grad(), grads[item.key()].grad()), 2e-1) << what << item.key();
    }
}

}  // namespace
}  // namespace stepwise::model
