// muon: one optimizer step over a preset's real parameters, Muon (Newton-Schulz in bf16 or fp32, batched by shape as
// the engine runs it or one matrix at a time as before issue 57) with its Adam group in the fused AdamW (as the
// speedrun stack beside the CPU flags runs it), against the AdamW over every parameter it replaces (the baseline's
// forloop, and fused): so Muon's cost per step shows where the muon flag pays it, and what batching buys. And
// Newton-Schulz alone, with its FLOPs: how near the machine's GEMM rate it runs.
#include "bench/optim/muon.h"
#include "bench/micro/micro.h"
#include "bench/oom.h"
#include "bench/trace/op_counts.h"
#include "model/gpt.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace stepwise::micro {

namespace {

// A preset's model with a gradient on every parameter, built once per preset and device (as adamw.cpp's).
model::GPT& model_with_grads(const MicroContext& ctx, const model::Preset& preset) {
  static std::map<std::string, model::GPT> built;
  const auto key = preset.name + "@" + ctx.device.str();
  if (auto it = built.find(key); it != built.end()) return it->second;
  torch::manual_seed(0);
  model::GPT gpt(preset.config);
  gpt->to(ctx.device);
  for (auto& p : gpt->parameters()) p.mutable_grad() = at::randn_like(p);
  return built.emplace(key, gpt).first->second;
}

// What one more step dispatches, after the timed iterations: its ATen ops and, on a GPU, the host's calls that
// launched its kernels (issue 57: Muon's launches per step, one matrix at a time against batched), as Google Benchmark
// counters. Counted once per benchmark (a repetition reports the first count), by the profiler --count-ops uses
// (bench/trace/op_counts.h).
void count_one_step(benchmark::State& state, const MicroContext& ctx, const std::string& key,
                    const std::function<void()>& step) {
  static const std::optional<std::string> gpu_side_unavailable = bench::prepare_profiler(ctx.device);
  static std::map<std::string, bench::StepWork> counted;
  if (state.error_occurred()) return;
  auto it = counted.find(key);
  try {
    if (it == counted.end())
      it = counted.emplace(key, bench::count_work(ctx.device, step, ctx.cuda() && !gpu_side_unavailable)).first;
  } catch (const std::exception& e) {
    state.SetLabel("not counted: " + bench::short_message(e));
    return;
  }
  state.counters["aten_ops"] = static_cast<double>(bench::aten_op_total(it->second));
  if (!ctx.cuda()) return;  // a CPU launches nothing: no count, rather than a zero
  if (gpu_side_unavailable) return state.SetLabel("launches not counted: " + *gpu_side_unavailable);
  state.counters["launches"] = static_cast<double>(bench::launch_total(it->second));
}

// Muon's step leaves the gradients in place (no zero_grad), so every iteration steps on the same ones.
void run_step(benchmark::State& state, const MicroContext& ctx, const model::Preset& preset,
              const std::string& variant) {
  auto& gpt = model_with_grads(ctx, preset);
  std::unique_ptr<bench::Optimizer> optimizer;
  if (variant.starts_with("adamw_")) {
    const auto kind = variant == "adamw_fused" ? bench::AdamWKind::Fused : bench::AdamWKind::Forloop;
    optimizer = bench::make_adamw(kind, gpt->parameters(), bench::AdamWOptions());
  } else {
    const auto dtype = variant.ends_with("bf16") ? bench::MuonNsDtype::Bf16 : bench::MuonNsDtype::Float32;
    const bool batched = variant.starts_with("batched");
    optimizer = bench::make_muon(bench::AdamWKind::Fused, gpt->named_parameters(),
                                 bench::MuonOptions().ns_dtype(dtype).batched(batched), bench::AdamWOptions());
  }
  run_timed(state, ctx, [&] { optimizer->step(); });
  count_one_step(state, ctx, benchmark_name("muon", preset, variant), [&] { optimizer->step(); });
  state.counters["matrices"] = static_cast<double>(bench::muon_groups(gpt->named_parameters()).matrices.size());
}

// Newton-Schulz alone, as the batched step runs it: each of the preset's shape stacks iterated in place in `dtype`
// (the GEMMs cost the same whatever the values), with the FLOPs of one pass over all of them as a counter, so that the
// FLOP rate the machine reaches shows what is left to gain without fewer FLOPs.
void run_newton_schulz(benchmark::State& state, const MicroContext& ctx, const model::Preset& preset,
                       at::ScalarType dtype) {
  auto& gpt = model_with_grads(ctx, preset);
  std::vector<bench::NsBuffers> stacks;
  double flops = 0;
  for (const auto& s : bench::Muon::ns_stacks(bench::muon_groups(gpt->named_parameters()).matrices)) {
    auto& buffers = stacks.emplace_back();
    buffers.fit(s.k, s.r, s.n, at::TensorOptions(ctx.device).dtype(dtype));
    buffers.X.normal_();
    flops += static_cast<double>(s.k) * bench::newton_schulz_flops(s.r, s.n);
  }
  run_timed(state, ctx, [&] {
    for (auto& buffers : stacks) bench::newton_schulz5_in(buffers);
  });
  state.counters["ns_flops"] = flops;
}

}  // namespace

void register_muon(const MicroContext& ctx) {
  for (const auto* preset : ctx.presets)
    for (const char* variant :
         {"adamw_forloop", "adamw_fused", "per_matrix_fp32", "per_matrix_bf16", "batched_fp32", "batched_bf16"})
      register_benchmark(
          ctx, benchmark_name("muon", *preset, variant, "step"),
          [&ctx, preset, v = std::string(variant)](benchmark::State& s) { run_step(s, ctx, *preset, v); });
  for (const auto* preset : ctx.presets)
    for (const auto& [name, dtype] : {std::pair{"fp32", at::kFloat}, {"bf16", at::kBFloat16}})
      register_benchmark(ctx, benchmark_name("muon", *preset, std::string("newton_schulz_") + name, "step"),
                         [&ctx, preset, dtype](benchmark::State& s) { run_newton_schulz(s, ctx, *preset, dtype); });
}

}  // namespace stepwise::micro
