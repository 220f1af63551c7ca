// --count-ops: what one step dispatches, counted by PyTorch's profiler (Kineto) after the timed steps, never during
// them: the ATen operators by name, the bytes allocated per device type and, on a GPU, the kernels, copies and sets
// it ran and the CUDA runtime and driver calls that launched them (one cudaGraphLaunch where a CUDA graph replays). The
// Python row counts its steps with the same profiler configuration (bench/python/op_counts.py) and hands back the raw
// counts, which are summarised here, so the two rows compare op for op.
#pragma once

#include "bench/step/train_step.h"

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stepwise::bench {

struct AllocationCount {
  int64_t count = 0;  // [memory] events of a positive size
  int64_t bytes = 0;  // their sizes, summed
  bool operator==(const AllocationCount&) const = default;
};

// One step as the profiler saw it.
struct StepWork {
  std::map<std::string, int64_t> aten_ops;             // "aten::mm" -> calls, nested calls included
  std::map<std::string, AllocationCount> allocations;  // by device type: "cpu", "cuda"
  std::map<std::string, int64_t> device_activities;    // GPU kernels, memcpy and memset by name; empty on a CPU
  std::map<std::string, int64_t> runtime_calls;        // host-side CUDA API calls by name: "cudaLaunchKernel"; ditto
  bool operator==(const StepWork&) const = default;
};

// A step's totals: its ATen ops (nested calls included), and the host's calls that launched GPU work (is_launch).
int64_t aten_op_total(const StepWork& work);
int64_t launch_total(const StepWork& work);

// The summary a result records as `op_counts` (results/README.md): the last counted step's counts, whether every
// counted step dispatched the same, and every count that varied with its value per step. `device_activities_counted`:
// false on a CPU, where there are neither device activities nor CUDA calls to count (null in the JSON, not empty).
nlohmann::json op_counts_json(const std::vector<StepWork>& steps, bool device_activities_counted);
nlohmann::json op_counts_unavailable_json(const std::string& reason);

// Whether a host-side event the profiler records is a CUDA runtime or driver API call ("cudaLaunchKernel",
// "cuLaunchKernel", "cudaGraphLaunch"), by its name, as bench/python/op_counts.py decides it.
bool is_cuda_api_call(const std::string& name);
// Whether such a call launches work: a kernel or a whole graph (the name has "Launch" in it).
bool is_launch(const std::string& name);

// The raw per-step counts as the Python row writes them ([{aten_ops, allocations, device_activities, runtime_calls}],
// result.json's op_counts.steps); throws std::invalid_argument on another shape.
std::vector<StepWork> step_work_from_json(const nlohmann::json& steps);

// Starts and stops one profile before a counted configuration's first step, and so before any CUDA graph is captured
// (compile captures inside a step): Kineto's first start in a process initialises CUPTI, and after a capture that is
// the hazard PyTorch documents (its issue 75504: an illegal memory access, or the graph's kernels not recorded);
// torch.profiler._utils._init_for_cuda_graphs starts an empty profile first for the same reason. On a GPU a kernel
// runs inside it: when Kineto records none, CUPTI did not load here (another tool holds it, or the kernel refuses
// it, as gVisor refused ncu's), and the reason comes back, for the counts to leave the GPU's side out, saying why,
// while the row still runs. nullopt: the profiler counts this device.
std::optional<std::string> prepare_profiler(const c10::Device& device);
// How many times prepare_profiler ran in this process (a test holds that it runs before the first step).
int64_t profiler_preparations();

// One call of `work` alone under the profiler (synchronised before it stops), counted: what count_step_work does for
// each step, for any part of one (bench/micro's muon family counts an optimizer step). `gpu_side`: the GPU's kernels
// and the CUDA calls too (prepare_profiler found the profiler counts this device). Throws what `work` throws.
StepWork count_work(const c10::Device& device, const std::function<void()>& work, bool gpu_side);

// Runs `steps` more steps, each alone under the profiler (synchronised before it stops), and summarises them. The
// step's phase marks should be off (Step::time_phases(nullptr)): a mark is no ATen op, but the Python row counts
// without them too. `gpu_side_unavailable`: prepare_profiler's reason, when the GPU's kernels and calls cannot be
// counted here; the host's side is still counted and the summary says why the rest is null. A failure costs only the
// counts: {status: unavailable, reason}.
nlohmann::json count_step_work(const c10::Device& device, Step& step, size_t steps,
                               const std::optional<std::string>& gpu_side_unavailable = std::nullopt);

}  // namespace stepwise::bench
