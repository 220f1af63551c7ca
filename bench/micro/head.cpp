// head: the output projection and its loss at vocabulary 50257 vs 50304 (a multiple of 64), forward+backward.
#include "bench/micro/micro.h"
#include "model/gpt.h"

#include <ATen/ATen.h>

namespace stepwise::micro {

namespace {

void run_head(benchmark::State& state, const MicroContext& ctx, const model::Preset& preset, int64_t vocab,
              at::ScalarType dtype) {
  const int64_t B = state.range(0), T = state.range(1), C = preset.config.n_embd();
  auto opts = at::TensorOptions().device(ctx.device).dtype(dtype);
  auto x = at::randn({B, T, C}, opts).requires_grad_(true);
  auto w = (at::randn({vocab, C}, opts) * 0.02).requires_grad_(true);
  auto targets =
      at::randint(preset.config.vocab_size(), {B, T}, at::TensorOptions().device(ctx.device).dtype(at::kLong));
  run_timed(state, ctx, [&] {
    model::cross_entropy(at::linear(x, w), targets).backward();  // logits (B, T, V)
    set_grads_to_none({x, w});
  });
  // Forward, input-gradient and weight-gradient matmuls: 3 x 2 M N K.
  state.counters["flop_per_s"] =
      benchmark::Counter(6.0 * static_cast<double>(B * T * C * vocab), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["tokens_per_s"] =
      benchmark::Counter(static_cast<double>(B * T), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

void register_head(const MicroContext& ctx) {
  for (const auto* preset : ctx.presets) {
    auto padded = preset->config;
    padded.vocab_padding(true);
    for (int64_t vocab : {preset->config.vocab_size(), padded.padded_vocab_size()})
      for (auto dtype : {at::kFloat, at::kBFloat16})
        register_benchmark(
            ctx,
            benchmark_name("head", *preset, "vocab" + std::to_string(vocab),
                           std::string("fwd+bwd/") + (dtype == at::kFloat ? "fp32" : "bf16")),
            [&ctx, preset, vocab, dtype](benchmark::State& s) { run_head(s, ctx, *preset, vocab, dtype); })
            ->ArgNames({"B", "T"})
            ->Args({preset->default_batch_size, preset->default_seq_len});
  }
}

}  // namespace stepwise::micro
