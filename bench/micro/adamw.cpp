// adamw: one optimizer step over a preset's real parameter list, per-parameter loop vs foreach vs fused.
#include "bench/micro/micro.h"
#include "bench/optim/adamw.h"
#include "model/gpt.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

namespace stepwise::micro {

namespace {

void run_adamw(benchmark::State& state, const MicroContext& ctx, const model::Preset& preset, bench::AdamWKind kind) {
  torch::manual_seed(0);
  model::GPT gpt(preset.config);
  gpt->to(ctx.device);
  auto params = gpt->parameters();
  double elements = 0;
  for (auto& p : params) {
    p.mutable_grad() = at::randn_like(p);
    elements += static_cast<double>(p.numel());
  }
  auto optimizer = bench::make_adamw(kind, params, bench::AdamWOptions());
  run_timed(state, ctx, [&] { optimizer->step(); });
  state.counters["params_per_s"] = benchmark::Counter(elements, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["tensors"] = static_cast<double>(params.size());
}

}  // namespace

void register_adamw(const MicroContext& ctx) {
  for (const auto* preset : ctx.presets)
    for (auto kind : {bench::AdamWKind::Reference, bench::AdamWKind::Foreach, bench::AdamWKind::Fused})
      register_benchmark(ctx, benchmark_name("adamw", *preset, bench::to_string(kind), "step"),
                         [&ctx, preset, kind](benchmark::State& s) { run_adamw(s, ctx, *preset, kind); });
}

}  // namespace stepwise::micro
