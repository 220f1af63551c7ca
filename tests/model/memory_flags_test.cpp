// The memory flags keep the function: checkpoint (full, selective) and chunked_ce against the same model without
// them, with dropout on, in fp32, pure bf16 and bf16 autocast, with and without the speedrun's model flags: the same
// loss and gradients, every dropout mask drawn again exactly (the generator ends where the plain model's does), and
// full checkpointing equal to the last bit.
#include "bench/step/bf16.h"
#include "model/chunked_ce.h"
#include "model/gpt.h"
#include "model/weights.h"
#include "tests/support.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/utils.h>

#include <gtest/gtest.h>

#include <functional>

namespace stepwise::model {
namespace {

using testing::kBf16;
using testing::kFp32;

enum class Precision { Fp32, PureBf16, Autocast };

struct MemoryCase {
  const char* name;
  std::function<void(GPTConfig&)> base;  // on both models
  std::function<void(GPTConfig&)> flag;  // on the variant only
  Precision precision;
};

void PrintTo(const MemoryCase& c, std::ostream* os) { *os << c.name; }

const char* precision_name(Precision p) {
  return p == Precision::Fp32 ? "fp32" : p == Precision::PureBf16 ? "bf16" : "autocast";
}

std::string case_name(const ::testing::TestParamInfo<MemoryCase>& info) {
  return std::string(info.param.name) + "_" + precision_name(info.param.precision);
}

// Dropout on, so a recompute that drew other masks would be caught.
GPTConfig config_with_dropout() { return testing::small_config().dropout(0.1); }

struct Step {
  at::Tensor loss;
  at::Tensor generator_after;  // the CPU generator's state once forward and backward are done
};

// One forward and backward from a fixed generator state: the masks both models draw are the same stream.
Step run_step(GPT& model, const at::Tensor& idx, const at::Tensor& targets, Precision precision) {
  torch::manual_seed(7);
  Step s;
  {
    bench::AutocastGuard autocast(c10::kCPU, precision == Precision::Autocast);
    s.loss = model->loss(idx, targets);
  }
  s.loss.backward();
  s.generator_after = at::detail::getDefaultCPUGenerator().get_state();
  return s;
}

class MemoryFlagEquivalence : public ::testing::TestWithParam<MemoryCase> {};

TEST_P(MemoryFlagEquivalence, SameLossGradientsAndDropoutMasks) {
  const auto& c = GetParam();
  const bool bf16 = c.precision != Precision::Fp32;
  // Measured worst relative gradient error over these cases: 4.4e-6 in fp32 (chunked_ce: the loss summed in another
  // order), 7.8e-3 in bf16 (selective on the hand-written layers); the bounds are fp32's and bf16's of the other flags'
  // equivalence test, twice the measured worst.
  const double grad_tol = bf16 ? 2e-2 : 1e-5;
  GPTConfig reference_config = config_with_dropout();
  c.base(reference_config);
  GPTConfig variant_config = reference_config;
  c.flag(variant_config);
  torch::manual_seed(0);
  GPT reference(reference_config), variant(variant_config);
  copy_weights(reference, variant);
  for (GPT* m : {&reference, &variant}) {
    (*m)->train();
    if (c.precision == Precision::PureBf16) (*m)->to(at::kBFloat16);
  }
  const int64_t V = reference_config.vocab_size();
  auto idx = at::randint(V, {2, 16}, at::kLong);
  auto targets = at::randint(V, {2, 16}, at::kLong);

  const Step expected = run_step(reference, idx, targets, c.precision);
  const Step actual = run_step(variant, idx, targets, c.precision);
  EXPECT_TRUE(testing::all_close(actual.loss.to(at::kFloat), expected.loss.to(at::kFloat), bf16 ? kBf16 : kFp32));
  EXPECT_TRUE(at::equal(actual.generator_after, expected.generator_after))
      << "the recompute left the generator elsewhere: its dropout masks are not the forward's";
  const auto reference_params = reference->named_parameters();
  for (const auto& item : variant->named_parameters()) {
    const auto& want = reference_params[item.key()].grad();
    const auto& got = item.value().grad();
    ASSERT_TRUE(got.defined()) << item.key() << " has no gradient";
    EXPECT_LT(testing::relative_error(got, want), grad_tol) << c.name << ": " << item.key();
  }
}

const auto kNothing = [](GPTConfig&) {};
const auto kSpeedrun = [](GPTConfig& g) { g.rotary(true).qk_norm(true).relu2(true).logit_softcap(true).softcap(3.0); };

std::vector<MemoryCase> memory_cases() {
  const std::vector<std::pair<const char*, std::pair<std::function<void(GPTConfig&)>, std::function<void(GPTConfig&)>>>>
      flags{
          {"checkpoint_full", {kNothing, [](GPTConfig& g) { g.checkpoint(true); }}},
          {"checkpoint_selective",
           {kNothing, [](GPTConfig& g) { g.checkpoint(true).checkpoint_mode(CheckpointMode::Selective); }}},
          {"chunked_ce", {kNothing, [](GPTConfig& g) { g.chunked_ce(true); }}},
          {"chunked_ce_rows_5", {kNothing, [](GPTConfig& g) { g.chunked_ce(true).ce_chunk_rows(5); }}},
          {"both_full", {kNothing, [](GPTConfig& g) { g.checkpoint(true).chunked_ce(true); }}},
          {"selective_native_flash",
           {[](GPTConfig& g) { g.native_layers(true).flash(true); },
            [](GPTConfig& g) { g.checkpoint(true).checkpoint_mode(CheckpointMode::Selective); }}},
          {"full_native_flash",
           {[](GPTConfig& g) { g.native_layers(true).flash(true); }, [](GPTConfig& g) { g.checkpoint(true); }}},
          // The speedrun's model flags on both models: the recompute runs qk_norm, rotary and relu2 again, and the
          // chunked head caps each chunk's logits.
          {"speedrun_checkpoint_full", {kSpeedrun, [](GPTConfig& g) { g.checkpoint(true); }}},
          {"speedrun_checkpoint_selective",
           {kSpeedrun, [](GPTConfig& g) { g.checkpoint(true).checkpoint_mode(CheckpointMode::Selective); }}},
          {"speedrun_chunked_ce", {kSpeedrun, [](GPTConfig& g) { g.chunked_ce(true).ce_chunk_rows(5); }}},
          {"speedrun_selective_native_flash",
           {[](GPTConfig& g) { kSpeedrun(g.native_layers(true).flash(true)); },
            [](GPTConfig& g) { g.checkpoint(true).checkpoint_mode(CheckpointMode::Selective).chunked_ce(true); }}},
      };
  std::vector<MemoryCase> cases;
  for (const auto& [name, fns] : flags)
    for (auto p : {Precision::Fp32, Precision::PureBf16, Precision::Autocast})
      cases.push_back({name, fns.first, fns.second, p});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Model, MemoryFlagEquivalence, ::testing::ValuesIn(memory_cases()), case_name);

// Full checkpointing runs the same ops in the same order, the backward of each block included, and selective on the
// native layers sums every gradient as the plain model does (one LayerNorm input, one GELU input): the loss and every
// gradient are equal to the last bit, in fp32, pure bf16 and autocast. On the hand-written layers selective sums a
// LayerNorm's input gradients in another order (the `fp32` class its flag declares).
TEST(Checkpoint, FullAndSelectiveOnNativeLayersAreTheSameFunctionToTheLastBit) {
  struct Exact {
    const char* name;
    std::function<void(GPTConfig&)> base, flag;
  };
  const std::vector<Exact> exact{
      {"full", kNothing, [](GPTConfig& g) { g.checkpoint(true); }},
      {"full, native_layers+flash", [](GPTConfig& g) { g.native_layers(true).flash(true); },
       [](GPTConfig& g) { g.checkpoint(true); }},
      {"selective, native_layers", [](GPTConfig& g) { g.native_layers(true); },
       [](GPTConfig& g) { g.checkpoint(true).checkpoint_mode(CheckpointMode::Selective); }},
  };
  for (const auto& e : exact)
    for (auto precision : {Precision::Fp32, Precision::PureBf16, Precision::Autocast}) {
      GPTConfig plain = config_with_dropout();
      e.base(plain);
      GPTConfig variant = plain;
      e.flag(variant);
      torch::manual_seed(0);
      GPT a(plain), b(variant);
      copy_weights(a, b);
      if (precision == Precision::PureBf16)
        for (GPT* m : {&a, &b}) (*m)->to(at::kBFloat16);
      auto idx = at::randint(plain.vocab_size(), {2, 16}, at::kLong);
      auto targets = at::randint(plain.vocab_size(), {2, 16}, at::kLong);
      const Step x = run_step(a, idx, targets, precision);
      const Step y = run_step(b, idx, targets, precision);
      EXPECT_TRUE(at::equal(x.loss, y.loss)) << e.name << " " << precision_name(precision);
      const auto grads = a->named_parameters();
      for (const auto& item : b->named_parameters())
        EXPECT_TRUE(at::equal(item.value().grad(), grads[item.key()].grad()))
            << e.name << " " << precision_name(precision) << ": " << item.key();
    }
}

TEST(ChunkedCrossEntropy, LigersChunkKeepsAChunksLogitsNearTheHiddenStatesSizeAndNeverBelowTheFloor) {
  // gpt2-124m at batch 32: 32768 rows, V 50257, C 768 -> ceil(V / C) = 66 -> 32768 / 66 = 497 -> 512 rows.
  EXPECT_EQ(chunked_ce_rows(32768, 50257, 768), 512);
  // At batch 8 the rule gives 125 -> 128, and tiny's 256 rows at width 64 give 1: both raised to the floor.
  EXPECT_EQ(chunked_ce_rows(8192, 50257, 768), kMinChunkRows);
  EXPECT_EQ(chunked_ce_rows(256, 50257, 64), kMinChunkRows);
  EXPECT_EQ(chunked_ce_rows(10, 10, 64), kMinChunkRows);
}

TEST(ChunkedCrossEntropy, ItsOnceAStepBuffersAreOneChunksLogitsAndTheHeadsFloat32Gradient) {
  GPTConfig c = preset("tiny").config;  // V 50257, C 64
  EXPECT_EQ(c.chunked_ce_step_bytes(256, 4), 0.0) << "nothing without chunked_ce";
  c.chunked_ce(true);
  // 256 rows: one chunk at the floor; logits (4 bytes) and their float32 log-softmax, then the (V, C) fp32 gradient.
  EXPECT_DOUBLE_EQ(c.chunked_ce_step_bytes(256, 4), 256.0 * 50257 * 8 + 50257.0 * 64 * 4);
  EXPECT_DOUBLE_EQ(c.chunked_ce_step_bytes(100, 2), 100.0 * 50257 * 6 + 50257.0 * 64 * 4) << "a chunk of all rows";
  c.ce_chunk_rows(16);
  EXPECT_DOUBLE_EQ(c.chunked_ce_step_bytes(4096, 4), 16.0 * 50257 * 8 + 50257.0 * 64 * 4);
}

TEST(ChunkedCrossEntropy, ChunksThatDoNotDivideTheRowsGiveTheSameLoss) {
  GPTConfig c = testing::small_config().chunked_ce(true).ce_chunk_rows(4);
  torch::manual_seed(0);
  GPT model(c);
  auto idx = at::randint(c.vocab_size(), {2, 10}, at::kLong);
  auto hidden = model->hidden_states(idx).flatten(0, 1);                                       // (20, C)
  auto loss = chunked_linear_cross_entropy(hidden, model->lm_head->weight, idx.flatten(), 3);  // 7 chunks
  auto plain = cross_entropy(model->forward(idx), idx);
  EXPECT_TRUE(testing::all_close(loss, plain, kFp32));
  EXPECT_THROW(GPT(testing::small_config().ce_chunk_rows(-1)), std::invalid_argument);
}

}  // namespace
}  // namespace stepwise::model
