// Shared pieces of the micro-benchmarks: the run's device and shapes, event timing, and skipping with a reason.
#pragma once

#include "model/config.h"

#include <ATen/core/Tensor.h>
#include <benchmark/benchmark.h>
#include <c10/core/Device.h>

#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace stepwise::micro {

struct MicroContext {
  c10::Device device = c10::kCPU;
  std::vector<const model::Preset*> presets;  // shapes come from these (width, heads, vocabulary, batch, sequence)
  bool cuda() const { return device.is_cuda(); }
};

// Each family's reference variant, the one its speedups are measured against; written into the JSON context.
struct FamilyBaseline {
  const char* family;
  const char* variant;
};
const std::vector<FamilyBaseline>& family_baselines();

// "attention/gpt2-124m/sdpa_flash/fwd+bwd/bf16": family / preset / variant / details; Google Benchmark appends the
// argument names (B:8/T:1024) and /manual_time on a GPU.
std::string benchmark_name(const std::string& family, const model::Preset& preset, const std::string& variant,
                           const std::string& details = "");

// Registers with the device's timing: CUDA events through UseManualTime on a GPU, the plain timer on a CPU.
benchmark::internal::Benchmark* register_benchmark(const MicroContext& ctx, const std::string& name,
                                                   std::function<void(benchmark::State&)> fn);

// Runs `body` once untimed (which also catches kernels that do not exist here: SkipWithError with the reason),
// then once per iteration. On CUDA each iteration sits between two events on the current stream and the time is
// reported with SetIterationTime; the only host wait is on the stop event, after the timed region.
void run_timed(benchmark::State& state, const MicroContext& ctx, const std::function<void()>& body);

// Sets the gradients of `leaves` to none, as a training step's zero_grad does: a fwd+bwd iteration that left them
// in place would make the next backward accumulate (an extra add per gradient a real step never runs).
void set_grads_to_none(const std::vector<at::Tensor>& leaves);

// Skips with the message when `condition` is false; returns whether the benchmark should go on.
bool require(benchmark::State& state, bool condition, const char* why);

// The sequence lengths a family sweeps for a preset: a quarter of its default, and the default.
std::vector<int64_t> sequence_lengths(const model::Preset& preset);

void register_attention(const MicroContext& ctx);
void register_layers(const MicroContext& ctx);
void register_adamw(const MicroContext& ctx);
void register_muon(const MicroContext& ctx);
void register_matmul(const MicroContext& ctx);
void register_head(const MicroContext& ctx);
void register_copy(const MicroContext& ctx);
void register_mask(const MicroContext& ctx);
void register_evaluation(const MicroContext& ctx);

}  // namespace stepwise::micro
