// Shared test helpers: small model configs and tensor comparisons with stated tolerances.
#pragma once

#include "bench/run_config.h"
#include "bench/tokens.h"
#include "model/config.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace stepwise::testing {

// Small enough for a CPU test, with GPT-2's full vocabulary so vocab padding is exercised; no dropout so two
// variants compute deterministic, comparable outputs.
inline model::GPTConfig small_config() {
  return model::GPTConfig().n_layer(2).n_head(4).n_embd(64).context_length(32).dropout(0.0);
}

// STEPWISE_TEST_DEVICE=cuda runs the model and engine tests on the GPU; CPU by default.
// "cuda" means cuda:0, as --device=cuda does: the engine's allocator and stream calls need an index.
inline c10::Device test_device() {
  const char* d = std::getenv("STEPWISE_TEST_DEVICE");
  c10::Device device = d ? c10::Device(d) : c10::Device(c10::kCPU);
  if (device.is_cuda() && !device.has_index()) device.set_index(0);
  return device;
}

// A run of the tiny preset on the CPU, small enough for planning and flag tests.
inline bench::RunConfig tiny_cpu_run() {
  bench::RunConfig c;
  c.preset = "tiny";
  c.model = model::preset("tiny").config;
  c.batch_size = 2;
  c.seq_len = 16;
  return c;
}

// A timed run of the tiny preset on the test device: `warmup` steps, then exactly `steps` measured, the stopping rule
// checked every `check_every`.
inline bench::RunConfig tiny_timed_run(size_t steps, size_t warmup, size_t check_every) {
  bench::RunConfig c = tiny_cpu_run();
  c.seq_len = 32;
  c.device = test_device();
  c.timing.warmup = warmup;
  c.timing.stop.min_steps = steps;
  c.timing.stop.max_steps = steps;
  c.timing.check_every = check_every;
  return c;
}

// 65,536 synthetic tokens over GPT-2's vocabulary, built once and shared by every run of a test binary.
inline std::shared_ptr<const bench::Tokens> gpt2_tokens() {
  static const auto tokens =
      std::make_shared<const bench::Tokens>(bench::synthetic_tokens(size_t{1} << 16, model::kGpt2VocabSize, 123));
  return tokens;
}

// Tolerances: float32 differs only by summation order; bf16 keeps 8 bits of mantissa.
struct Tolerance {
  double rtol, atol;
};
constexpr Tolerance kFp32{1e-4, 1e-5};
constexpr Tolerance kBf16{5e-2, 5e-2};

inline ::testing::AssertionResult all_close(const at::Tensor& actual, const at::Tensor& expected, Tolerance tol) {
  if (actual.sizes() != expected.sizes())
    return ::testing::AssertionFailure() << "shape " << actual.sizes() << " != " << expected.sizes();
  auto a = actual.to(at::kDouble), e = expected.to(at::kDouble);
  auto excess = (a - e).abs() - (tol.atol + tol.rtol * e.abs());
  const double worst = excess.max().item<double>();
  if (worst <= 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max |actual - expected| = " << (a - e).abs().max().item<double>()
                                       << " exceeds atol " << tol.atol << " + rtol " << tol.rtol << " * |expected|";
}

// ||actual - expected|| / ||expected||: a scale-free comparison for gradients, whose magnitudes vary widely.
inline double relative_error(const at::Tensor& actual, const at::Tensor& expected) {
  auto a = actual.to(at::kDouble), e = expected.to(at::kDouble);
  const double denom = e.norm().item<double>();
  return (a - e).norm().item<double>() / (denom > 0 ? denom : 1.0);
}

// `steps` random (batch, seq) token batches over GPT-2's vocabulary, inputs and targets, the same for every caller
// with the same seed: what data-parallel tests split between ranks.
struct Batches {
  std::vector<at::Tensor> x, y;  // steps x (batch, seq)
};
inline Batches random_batches(int steps, int64_t batch, int64_t seq, uint64_t seed) {
  torch::manual_seed(seed);
  Batches b;
  for (int i = 0; i < steps; ++i) {
    b.x.push_back(at::randint(model::kGpt2VocabSize, {batch, seq}, at::kLong));
    b.y.push_back(at::randint(model::kGpt2VocabSize, {batch, seq}, at::kLong));
  }
  return b;
}

// A run's training and validation streams, synthetic tokens over its vocabulary from its seed (9:1): what the
// convergence and budget tests train and evaluate on without a corpus.
struct Streams {
  std::shared_ptr<const bench::Tokens> train, val;
};
inline Streams synthetic_streams(const bench::RunConfig& c) {
  auto all = bench::synthetic_tokens(size_t{1} << 16, c.model.vocab_size(), c.seed);
  const auto split = static_cast<std::ptrdiff_t>(all.size() * 9 / 10);
  return {std::make_shared<const bench::Tokens>(all.begin(), all.begin() + split),
          std::make_shared<const bench::Tokens>(all.begin() + split, all.end())};
}

}  // namespace stepwise::testing
