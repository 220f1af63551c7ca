// adamw: one optimizer step over a preset's real parameter list, per-parameter loop vs foreach vs fused.
#include "bench/optim/adamw.h"
#include "bench/micro/micro.h"
#include "model/gpt.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <map>
#include <string>
#include <vector>

namespace stepwise::micro {

namespace {

// A preset's parameters with gradients, built once per preset and device: Google Benchmark calls a benchmark's
// function once per round while it sizes the iteration count, and building gpt2-124m takes seconds each time.
const std::vector<at::Tensor>& parameters_with_grads(const MicroContext& ctx, const model::Preset& preset) {
  static std::map<std::string, std::vector<at::Tensor>> built;
  const auto key = preset.name + "@" + ctx.device.str();
  if (auto it = built.find(key); it != built.end()) return it->second;
  torch::manual_seed(0);
  model::GPT gpt(preset.config);
  gpt->to(ctx.device);
  auto params = gpt->parameters();
  for (auto& p : params) p.mutable_grad() = at::randn_like(p);
  return built.emplace(key, std::move(params)).first->second;
}

void run_adamw(benchmark::State& state, const MicroContext& ctx, const model::Preset& preset, bench::AdamWKind kind) {
  const auto& params = parameters_with_grads(ctx, preset);
  double elements = 0;
  for (const auto& p : params) elements += static_cast<double>(p.numel());
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
