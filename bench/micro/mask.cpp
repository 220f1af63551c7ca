// mask: the reference's stored context x context buffer converted and sliced per call vs a mask built per call.
#include "bench/micro/micro.h"

#include <ATen/ATen.h>

namespace stepwise::micro {

namespace {

void run_mask(benchmark::State& state, const MicroContext& ctx, const model::Preset& preset, bool stored) {
  const int64_t T = state.range(0), N = preset.config.context_length();
  auto buffer = at::triu(at::ones({N, N}, at::TensorOptions().device(ctx.device)), 1);  // (N, N) float, as registered
  run_timed(state, ctx, [&] {
    if (stored)
      buffer.to(at::kBool).slice(0, 0, T).slice(1, 0, T);
    else
      at::triu(at::ones({T, T}, at::TensorOptions().device(ctx.device).dtype(at::kBool)), 1);
  });
  state.counters["elements_per_s"] =
      benchmark::Counter(static_cast<double>(T * T), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

void register_mask(const MicroContext& ctx) {
  for (const auto* preset : ctx.presets)
    for (bool stored : {true, false})
      register_benchmark(ctx, benchmark_name("mask", *preset, stored ? "stored" : "dynamic"),
                         [&ctx, preset, stored](benchmark::State& s) { run_mask(s, ctx, *preset, stored); })
          ->ArgNames({"T"})
          ->Args({preset->default_seq_len / 4})
          ->Args({preset->default_seq_len});
}

}  // namespace stepwise::micro
