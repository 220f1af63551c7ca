// matmul: the model's linear-layer shapes in fp32, tf32 and bf16, with FLOP/s.
#include "bench/micro/micro.h"
#include "bench/step/tf32.h"

#include <ATen/ATen.h>

namespace stepwise::micro {

namespace {

struct Shape {
  const char* name;
  int64_t in_factor, out_factor;  // in and out features as multiples of the width C
};
// Per block: the fused QKV (C -> 3C), attention output (C -> C), MLP up (C -> 4C) and down (4C -> C).
const Shape kShapes[] = {{"qkv", 1, 3}, {"attn_proj", 1, 1}, {"mlp_up", 1, 4}, {"mlp_down", 4, 1}};

void run_matmul(benchmark::State& state, const MicroContext& ctx, const model::Preset& preset, Shape shape,
                const std::string& precision) {
  if (!require(state, precision != "tf32" || ctx.cuda(), "tf32 needs a CUDA device (tensor cores)")) return;
  const int64_t M = state.range(0) * state.range(1), C = preset.config.n_embd();
  const int64_t K = shape.in_factor * C, N = shape.out_factor * C;
  const auto dtype = precision == "bf16" ? at::kBFloat16 : at::kFloat;
  auto opts = at::TensorOptions().device(ctx.device).dtype(dtype);
  auto x = at::randn({M, K}, opts), w = at::randn({N, K}, opts);
  bench::Tf32Guard tf32(precision == "tf32");
  run_timed(state, ctx, [&] { at::linear(x, w); });  // (M, K) x (K, N)
  state.counters["flop_per_s"] =
      benchmark::Counter(2.0 * static_cast<double>(M * N * K), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

void register_matmul(const MicroContext& ctx) {
  for (const auto* preset : ctx.presets)
    for (const auto& shape : kShapes)
      for (const char* precision : {"fp32", "tf32", "bf16"})
        register_benchmark(
            ctx, benchmark_name("matmul", *preset, precision, shape.name),
            [&ctx, preset, shape, precision](benchmark::State& s) { run_matmul(s, ctx, *preset, shape, precision); })
            ->ArgNames({"B", "T"})
            ->Args({preset->default_batch_size, preset->default_seq_len});
}

}  // namespace stepwise::micro
