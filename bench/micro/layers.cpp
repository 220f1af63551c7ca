// layernorm and gelu: the reference's hand-written formulas against torch's native kernels, forward and backward.
#include "bench/micro/micro.h"
#include "model/gpt.h"

#include <ATen/ATen.h>

namespace stepwise::micro {

namespace {

void run_layer(benchmark::State& state, const MicroContext& ctx, const model::Preset& preset, bool layernorm,
               bool native, bool backward) {
  const int64_t B = state.range(0), T = state.range(1), C = preset.config.n_embd();
  const int64_t width = layernorm ? C : 4 * C;  // GELU runs on the MLP's hidden width
  model::LayerNorm norm(C, native);
  norm->to(ctx.device);
  auto x = at::randn({B, T, width}, at::TensorOptions().device(ctx.device)).requires_grad_(backward);
  auto grad = at::randn_like(x);
  run_timed(state, ctx, [&] {
    auto y = layernorm ? norm->forward(x) : model::gelu_tanh(x, native);
    if (!backward) return;
    y.backward(grad);
    set_grads_to_none({x, norm->weight, norm->bias});
  });
  const double elements = static_cast<double>(B * T * width);
  state.counters["elements_per_s"] = benchmark::Counter(elements, benchmark::Counter::kIsIterationInvariantRate);
  // Read x, write y (and for backward read grad, x, write dx): the traffic a fused kernel cannot avoid.
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * elements * 4 * (backward ? 5 : 2)));
}

}  // namespace

void register_layers(const MicroContext& ctx) {
  for (const auto* preset : ctx.presets)
    for (bool layernorm : {true, false})
      for (bool native : {false, true})
        for (bool backward : {false, true})
          register_benchmark(ctx,
                             benchmark_name(layernorm ? "layernorm" : "gelu", *preset,
                                            native ? "native" : "handwritten", backward ? "fwd+bwd" : "fwd"),
                             [&ctx, preset, layernorm, native, backward](benchmark::State& s) {
                               run_layer(s, ctx, *preset, layernorm, native, backward);
                             })
              ->ArgNames({"B", "T"})
              ->ArgsProduct({{preset->default_batch_size}, sequence_lengths(*preset)});
}

}  // namespace stepwise::micro
