// What every micro-benchmark family shares: names, CUDA-event timing through UseManualTime, skipping with a reason,
// and a training step's gradient handling.
#include "bench/micro/micro.h"

#include "bench/oom.h"

#ifdef STEPWISE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#endif

namespace stepwise::micro {

const std::vector<FamilyBaseline>& family_baselines() {
  static const std::vector<FamilyBaseline> table{
      {"attention", "explicit"},    {"layernorm", "handwritten"}, {"gelu", "handwritten"},       {"adamw", "reference"},
      {"matmul", "fp32"},           {"head", "vocab50257"},       {"copy", "pageable_blocking"}, {"mask", "stored"},
      {"evaluation", "train_step"}, {"muon", "adamw_forloop"},
  };
  return table;
}

std::string benchmark_name(const std::string& family, const model::Preset& preset, const std::string& variant,
                           const std::string& details) {
  return family + "/" + preset.name + "/" + variant + (details.empty() ? "" : "/" + details);
}

benchmark::internal::Benchmark* register_benchmark(const MicroContext& ctx, const std::string& name,
                                                   std::function<void(benchmark::State&)> fn) {
  auto* b = benchmark::RegisterBenchmark(name.c_str(), [fn](benchmark::State& state) { fn(state); });
  b->Unit(benchmark::kMicrosecond);
  if (ctx.cuda()) b->UseManualTime();
  return b;
}

void run_timed(benchmark::State& state, const MicroContext& ctx, const std::function<void()>& body) {
  // One catch for warm-up and timed loop: a throw escaping to RunSpecifiedBenchmarks would end every family.
  try {
    body();  // warm-up: allocator, cuBLAS heuristics, kernel availability
#ifdef STEPWISE_WITH_CUDA
    if (ctx.cuda()) {
      auto stream = at::cuda::getCurrentCUDAStream(ctx.device.index());
      at::cuda::CUDAEvent start(cudaEventDefault), stop(cudaEventDefault);
      for (auto _ : state) {
        start.record(stream);
        body();
        stop.record(stream);
        stop.synchronize();
        state.SetIterationTime(start.elapsed_time(stop) / 1000.0);
      }
      return;
    }
#endif
    for (auto _ : state) body();
  } catch (const std::exception& e) {
    state.SkipWithError(bench::short_message(e).c_str());
  }
}

void set_grads_to_none(const std::vector<at::Tensor>& leaves) {
  for (auto leaf : leaves) leaf.mutable_grad().reset();
}

bool require(benchmark::State& state, bool condition, const char* why) {
  if (!condition) state.SkipWithError(why);
  return condition;
}

std::vector<int64_t> sequence_lengths(const model::Preset& preset) {
  const int64_t t = preset.default_seq_len;
  return t >= 4 ? std::vector<int64_t>{t / 4, t} : std::vector<int64_t>{t};
}

}  // namespace stepwise::micro
