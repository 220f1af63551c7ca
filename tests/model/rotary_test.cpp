// The rotary flag: the rotation's invariants from the spec (norm kept, R_0 = I, q . k depends only on the positions'
// difference), the halves-split layout against a float64 reference written from the formula, and what rotary does to
// the model (no position table, parameter count, the same block weights from the same seed, v untouched).
#include "model/rotary.h"
#include "model/gpt.h"
#include "model/weights.h"
#include "tests/support.h"

#include <torch/csrc/autograd/grad_mode.h>
#include <torch/utils.h>

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

namespace stepwise::model {
namespace {

using testing::kFp32;

constexpr int64_t kB = 2, kH = 3, kT = 40, kD = 16;

at::Tensor rotated(const at::Tensor& x) {  // (B, H, T, D), every position from 0
  const auto [cos, sin] = std::apply(rotation_tables, rotary_tables(x.size(2), x.size(3), x.device()));
  return apply_rotary(x, cos, sin);
}

// The spec's rotation written out in float64, pair by pair: (x_i, x_{i+D/2}) at position t turns by t * 10000^(-2i/D).
at::Tensor rotary_reference(const at::Tensor& x) {
  auto x64 = x.to(at::kDouble);
  auto out = at::empty_like(x64);
  const int64_t T = x.size(2), D = x.size(3), half = D / 2;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(t) * std::pow(10000.0, -2.0 * static_cast<double>(i) / D);
      const auto x1 = x64.select(2, t).select(-1, i), x2 = x64.select(2, t).select(-1, i + half);
      out.select(2, t).select(-1, i).copy_(x1 * std::cos(angle) + x2 * std::sin(angle));
      out.select(2, t).select(-1, i + half).copy_(x2 * std::cos(angle) - x1 * std::sin(angle));
    }
  return out;
}

TEST(Rotary, IsTheSpecsRotationOfSplitHalves) {
  torch::manual_seed(0);
  const auto x = at::randn({kB, kH, kT, kD});
  // Measured: 2.9e-7 worst absolute error (float32 tables and products at angles up to 39 rad).
  EXPECT_TRUE(testing::all_close(rotated(x), rotary_reference(x), kFp32));
}

// apply_rotary's x [cos, cos] + roll(x, D/2) [sin, -sin] is the halves' formula (x1 cos + x2 sin, x2 cos - x1 sin) to
// the bit, forward and backward, in float32 and bf16: the same products summed, the negation exact. Zeros compared by
// value (a -0 where the halves give +0 sums the same).
TEST(Rotary, TheRolledFormIsTheHalvesFormulaToTheBit) {
  for (const auto dtype : {at::kFloat, at::kBFloat16}) {
    torch::manual_seed(0);
    const auto x = at::randn({kB, kH, kT, kD}).to(dtype);
    const auto [cos, sin] = rotary_tables(kT, kD, x.device());  // (T, D/2)
    const auto c = cos.to(dtype), s = sin.to(dtype);
    const auto halves = x.clone().requires_grad_(true), rolled = x.clone().requires_grad_(true);
    const auto x1 = halves.slice(-1, 0, kD / 2), x2 = halves.slice(-1, kD / 2);
    const auto expected = at::cat({x1 * c + x2 * s, x2 * c - x1 * s}, -1);
    const auto [c2, s2] = rotation_tables(c, s);
    const auto y = apply_rotary(rolled, c2, s2);
    EXPECT_TRUE(at::equal(y, expected)) << dtype;
    const auto grad = at::randn_like(y);
    expected.backward(grad);
    y.backward(grad);
    EXPECT_TRUE(at::equal(rolled.grad() + 0.0, halves.grad() + 0.0)) << dtype;
  }
}

TEST(Rotary, KeepsEveryHeadVectorsNormAndLeavesPositionZeroAlone) {
  torch::manual_seed(0);
  const auto x = at::randn({kB, kH, kT, kD});
  const auto y = rotated(x);
  EXPECT_TRUE(testing::all_close(y.norm(2, {-1}), x.norm(2, {-1}), kFp32));
  EXPECT_TRUE(at::equal(y.select(2, 0), x.select(2, 0))) << "R_0 is the identity: cos 0 = 1, sin 0 = 0 exactly";
}

// <R_m q, R_n k> = <R_{m+s} q, R_{n+s} k>: one q and one k placed at every position, their scores compared along each
// diagonal (m - n fixed).
TEST(Rotary, ScoresDependOnlyOnTheRelativePosition) {
  torch::manual_seed(0);
  const auto q = at::randn({1, 1, 1, kD}).expand({1, 1, kT, kD}).contiguous();
  const auto k = at::randn({1, 1, 1, kD}).expand({1, 1, kT, kD}).contiguous();
  const auto scores = at::matmul(rotated(q), rotated(k).transpose(2, 3)).squeeze();  // (T, T): [m, n]
  const double unrotated = (q[0][0][0] * k[0][0][0]).sum().item<double>();
  for (int64_t offset = -(kT - 1); offset < kT; ++offset) {
    const auto diagonal = scores.diagonal(offset);  // m - n = -offset, every shift s
    EXPECT_TRUE(testing::all_close(diagonal, diagonal[0].expand_as(diagonal), {1e-5, 1e-5})) << "offset " << offset;
  }
  EXPECT_NEAR(scores.diagonal(0)[0].item<double>(), unrotated, 1e-5) << "equal positions: the plain dot product";
  // And it does depend on the difference: otherwise the test above would pass for no rotation at all.
  EXPECT_GT((scores.diagonal(0)[0] - scores.diagonal(5)[0]).abs().item<double>(), 1e-3);
}

TEST(Rotary, TheModelHasNoPositionTable) {
  const auto config = testing::small_config().rotary(true);
  GPT model(config);
  EXPECT_TRUE(model->wpe.is_empty());
  EXPECT_FALSE(model->named_parameters().contains("wpe.weight"));
  EXPECT_EQ(config.position_embedding_parameters(), 0);
  EXPECT_EQ(model->parameter_count(), config.parameter_count());
  EXPECT_EQ(config.parameter_count(), testing::small_config().parameter_count() - 32 * 64);  // context x width
  EXPECT_EQ(config.flops_per_token(16), testing::small_config().flops_per_token(16)) << "wpe is a lookup, not a matmul";
}

TEST(Rotary, EveryOtherWeightIsCarriedFromTheModelWithAPositionTable) {
  torch::manual_seed(0);
  GPT learned(testing::small_config());
  for (const bool flash : {false, true}) {
    GPT rotary(testing::small_config().rotary(true).flash(flash));
    copy_weights(learned, rotary);
    GPT back(testing::small_config().rotary(true));
    copy_weights(rotary, back);
    const auto original = learned->named_parameters();
    for (const auto& item : back->named_parameters())
      EXPECT_TRUE(at::equal(item.value(), original[item.key()])) << item.key();
  }
  GPT rotary(testing::small_config().rotary(true));
  try {
    copy_weights(rotary, learned);
    FAIL() << "a rotary model has no position table to carry";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rotary"), std::string::npos) << e.what();
  }
}

// The attention applies the rotation to q and k only: the model's output equals attention written out here with q
// and k rotated and v as projected, in both layouts.
TEST(Rotary, TheAttentionRotatesQAndKButNotV) {
  for (const bool flash : {false, true}) {
    torch::manual_seed(0);
    CausalSelfAttention attn(testing::small_config().rotary(true).flash(flash));
    attn->eval();
    torch::NoGradGuard no_grad;
    const auto x = at::randn({kB, 16, 64});
    const int64_t H = 4, D = 16;
    at::Tensor q, k, v;
    if (flash) {
      auto qkv = at::linear(x, attn->c_attn->weight).view({kB, 16, 3, H, D}).permute({2, 0, 3, 1, 4});
      q = qkv[0], k = qkv[1], v = qkv[2];
    } else {
      q = at::linear(x, attn->query->weight).view({kB, 16, H, D}).transpose(1, 2);
      k = at::linear(x, attn->key->weight).view({kB, 16, H, D}).transpose(1, 2);
      v = at::linear(x, attn->value->weight).view({kB, 16, H, D}).transpose(1, 2);
    }
    auto scores = at::matmul(rotated(q), rotated(k).transpose(2, 3)) / std::sqrt(static_cast<double>(D));
    scores.masked_fill_(at::triu(at::ones({16, 16}, at::kBool), 1), -INFINITY);
    auto y = at::matmul(at::softmax(scores, -1), v).transpose(1, 2).reshape({kB, 16, 64});
    const auto expected = at::linear(y, attn->c_proj->weight, attn->c_proj->bias);
    EXPECT_TRUE(testing::all_close(attn(x), expected, kFp32)) << (flash ? "flash" : "reference");
  }
}

// The attention reads the tables from a cache keyed by (T, D, device, dtype): built once, the same tensors for every
// layer and forward after, holding exactly what rotary_tables builds laid out by rotation_tables, cast to the dtype
// asked for.
TEST(Rotary, TheTablesAreBuiltOncePerShapeDeviceAndDtype) {
  const c10::Device cpu(c10::kCPU);
  const auto [cos, sin] = cached_rotary_tables(kT, kD, cpu, at::kFloat);
  const auto [cos_again, sin_again] = cached_rotary_tables(kT, kD, cpu, at::kFloat);
  EXPECT_TRUE(cos.is_same(cos_again) && sin.is_same(sin_again)) << "the second call rebuilt them";
  const auto [fresh_cos, fresh_sin] = std::apply(rotation_tables, rotary_tables(kT, kD, cpu));
  EXPECT_TRUE(at::equal(cos, fresh_cos) && at::equal(sin, fresh_sin));
  EXPECT_FALSE(cos.requires_grad());

  const auto [cos16, sin16] = cached_rotary_tables(kT, kD, cpu, at::kBFloat16);
  EXPECT_EQ(cos16.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(at::equal(cos16, fresh_cos.to(at::kBFloat16)) && at::equal(sin16, fresh_sin.to(at::kBFloat16)));
  const auto [longer, unused] = cached_rotary_tables(kT + 1, kD, cpu, at::kFloat);
  EXPECT_EQ(longer.size(0), kT + 1) << "another T is another entry";
  EXPECT_EQ(cached_rotary_tables(kT, kD + 2, cpu, at::kFloat).first.size(1), kD + 2);
}

TEST(Rotary, AnOddHeadDimensionIsAClearError) {
  const auto config = testing::small_config().n_embd(60).n_head(4).rotary(true);  // head dim 15
  try {
    config.validate();
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("must be even"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace stepwise::model
