// evaluation: what --target-loss's evaluation costs beside a training step, so a user can choose --eval-every. One
// training step (forward, backward, AdamW, at the preset's batch) against one validation batch of the same shape
// (forward in eval mode, no gradients, the loss read back): an evaluation of N batches every K steps adds about
// N x eval_batch / (K x train_step) to the training time, off the clock.
#include "bench/measure/convergence.h"
#include "bench/micro/micro.h"
#include "bench/step/train_step.h"

#include <memory>

namespace stepwise::micro {

namespace {

bench::RunConfig config_for(const MicroContext& ctx, const model::Preset& preset) {
  bench::RunConfig c;
  c.model = preset.config;
  c.batch_size = preset.default_batch_size;
  c.seq_len = preset.default_seq_len;
  c.device = ctx.device;
  return c;
}

// Enough synthetic tokens for the loader's windows and one validation batch.
std::shared_ptr<const bench::Tokens> tokens_for(const bench::RunConfig& c) {
  return std::make_shared<const bench::Tokens>(
      bench::synthetic_tokens(static_cast<size_t>(16 * c.batch_size * (c.seq_len + 1)), c.model.vocab_size(), 0));
}

void run_train_step(benchmark::State& state, const MicroContext& ctx, const model::Preset& preset) {
  const auto c = config_for(ctx, preset);
  bench::TrainState train = bench::make_train_state(c, tokens_for(c));
  const auto step = bench::make_step(train, c);
  run_timed(state, ctx, [&] { (*step)(); });
  state.counters["tokens_per_s"] =
      benchmark::Counter(static_cast<double>(c.batch_size * c.seq_len), benchmark::Counter::kIsIterationInvariantRate);
}

void run_eval_batch(benchmark::State& state, const MicroContext& ctx, const model::Preset& preset) {
  const auto c = config_for(ctx, preset);
  const auto tokens = tokens_for(c);
  bench::TrainState train = bench::make_train_state(c, tokens);
  const auto set = bench::validation_set(*tokens, 1, c.batch_size, c.seq_len, c.device);  // (B, T), one batch
  run_timed(state, ctx, [&] { benchmark::DoNotOptimize(bench::validation_loss(train, set)); });
  state.counters["tokens_per_s"] =
      benchmark::Counter(static_cast<double>(c.batch_size * c.seq_len), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

void register_evaluation(const MicroContext& ctx) {
  for (const auto* preset : ctx.presets) {
    register_benchmark(ctx, benchmark_name("evaluation", *preset, "train_step", "fwd+bwd+adamw"),
                       [&ctx, preset](benchmark::State& s) { run_train_step(s, ctx, *preset); });
    register_benchmark(ctx, benchmark_name("evaluation", *preset, "eval_batch", "fwd"),
                       [&ctx, preset](benchmark::State& s) { run_eval_batch(s, ctx, *preset); });
  }
}

}  // namespace stepwise::micro
