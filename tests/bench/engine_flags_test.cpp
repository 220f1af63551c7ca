// The engine's flags keep the math: bf16 (pure and autocast) and TF32 against float32 within their dtype's
// tolerance, and the three copy modes deliver identical batches. (The model's flags:
// tests/model/flag_equivalence_test.cpp.)
#include "bench/data/loader.h"
#include "bench/step/bf16.h"
#include "bench/step/tf32.h"
#include "model/gpt.h"
#include "model/weights.h"
#include "tests/support.h"

#include <torch/cuda.h>
#include <torch/utils.h>

#include <gtest/gtest.h>

namespace stepwise::bench {
namespace {

struct Pair {
  model::GPT fp32{nullptr}, other{nullptr};
  at::Tensor idx;
};

Pair two_copies(const c10::Device& device) {
  torch::manual_seed(0);
  Pair p{model::GPT(testing::small_config()), model::GPT(testing::small_config()), {}};
  model::copy_weights(p.fp32, p.other);
  p.fp32->to(device);
  p.other->to(device);
  p.idx = at::randint(model::kGpt2VocabSize, {2, 16}, at::TensorOptions().dtype(at::kLong).device(device));
  return p;
}

TEST(PrecisionFlags, PureBf16ComputesTheFloat32FunctionWithinBf16Tolerance) {
  auto p = two_copies(testing::test_device());
  p.other->to(at::kBFloat16);
  const auto reference = p.fp32->forward(p.idx);
  const auto bf16 = p.other->forward(p.idx);
  EXPECT_EQ(bf16.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(testing::all_close(bf16, reference, testing::kBf16));
  EXPECT_FALSE(at::equal(bf16.to(at::kFloat), reference)) << "bf16 must actually round";
}

TEST(PrecisionFlags, AutocastBf16ComputesTheFloat32FunctionWithinBf16Tolerance) {
  const auto device = testing::test_device();
  auto p = two_copies(device);
  const auto reference = p.fp32->forward(p.idx);
  at::Tensor autocast;
  {
    AutocastGuard guard(device.type(), true);
    autocast = p.other->forward(p.idx);
  }
  EXPECT_EQ(autocast.scalar_type(), at::kBFloat16);  // the head's matmul ran in bf16
  EXPECT_EQ(p.other->lm_head->weight.scalar_type(), at::kFloat) << "autocast keeps fp32 weights";
  EXPECT_TRUE(testing::all_close(autocast, reference, testing::kBf16));
}

TEST(PrecisionFlags, Tf32ComputesTheFloat32FunctionWithinTf32Tolerance) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "TF32 exists only on CUDA tensor cores (compiled, not run here)";
  auto p = two_copies(c10::Device(c10::kCUDA, 0));
  at::Tensor reference, tf32;
  {
    Tf32Guard off(false);
    reference = p.fp32->forward(p.idx);
  }
  {
    Tf32Guard on(true);
    tf32 = p.other->forward(p.idx);
  }
  // TF32 keeps 10 mantissa bits in the products: looser than fp32, tighter than bf16.
  EXPECT_TRUE(testing::all_close(tf32, reference, {1e-2, 1e-2}));
  // And it did engage: bit-identical logits would mean the flag changed nothing.
  EXPECT_FALSE(at::equal(tf32, reference)) << "TF32 on gave the IEEE float32 result exactly";
}

TEST(PrecisionFlags, Tf32EngagesOnAFloat32Matmul) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "TF32 exists only on CUDA tensor cores (compiled, not run here)";
  // TF32 rounds the operands to 10 mantissa bits: a 1024-deep product differs from IEEE float32 by about 1e-3
  // relative. Bit-identical (or 1e-7-close) results would mean cuBLAS never saw the setting.
  auto opts = at::TensorOptions().device(c10::Device(c10::kCUDA, 0));
  torch::manual_seed(0);
  auto a = at::randn({1024, 1024}, opts), b = at::randn({1024, 1024}, opts);
  at::Tensor ieee, tf32;
  {
    Tf32Guard off(false);
    ieee = at::mm(a, b);
  }
  {
    Tf32Guard on(true);
    tf32 = at::mm(a, b);
  }
  const double rel = testing::relative_error(tf32, ieee);
  EXPECT_GT(rel, 1e-4) << "TF32 did not engage";
  EXPECT_LT(rel, 1e-2);
}

TEST(PinnedMemory, EveryCopyModeDeliversTheSameBatches) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "pinned memory and copy streams need CUDA (compiled, not run here)";
  auto tokens = std::make_shared<const Tokens>(synthetic_tokens(1 << 16, model::kGpt2VocabSize, 3));
  std::vector<std::vector<at::Tensor>> seen;
  // The reference's pageable copy, then pinned_memory blocking and async.
  for (auto [pinned, mode] : {std::pair{false, PinnedMode::Async}, std::pair{true, PinnedMode::Blocking},
                              std::pair{true, PinnedMode::Async}}) {
    RunConfig o;
    o.batch_size = 4;
    o.seq_len = 32;
    o.device = c10::Device(c10::kCUDA, 0);
    o.pinned_memory = pinned;
    o.pinned_mode = mode;
    Loader loader(tokens, o);
    seen.emplace_back();
    for (int i = 0; i < 10; ++i) seen.back().push_back(loader.next().x.cpu());
  }
  for (size_t m = 1; m < seen.size(); ++m)
    for (size_t i = 0; i < seen[0].size(); ++i) EXPECT_TRUE(at::equal(seen[m][i], seen[0][i])) << m << " " << i;
}

}  // namespace
}  // namespace stepwise::bench
