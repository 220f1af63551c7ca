// Peak memory over the measured steps: the CUDA caching allocator's stats, or the process's peak RSS on CPU.
#pragma once

#include "bench/run_config.h"

#include <c10/core/Device.h>

#include <cstdint>
#include <optional>
#include <string>

namespace stepwise::bench {

struct MemoryStats {
  std::string kind;   // "cuda_caching_allocator" or "process_rss"
  std::string scope;  // what the peaks cover (set by the runner): the measured steps, the capture too, or the process
  std::optional<int64_t> peak_allocated_bytes, peak_reserved_bytes;
  std::optional<int64_t> current_allocated_bytes, current_reserved_bytes;
  std::optional<int64_t> peak_rss_bytes;
};

// Starts a new peak window (CUDA: resetPeakStats; CPU: writing "5" to /proc/self/clear_refs resets VmHWM). Returns
// false when the kernel refused, in which case the CPU peak still covers the whole process since start-up.
bool reset_peak_memory(const c10::Device& device, const char* clear_refs = "/proc/self/clear_refs");
MemoryStats read_memory(const c10::Device& device);

// Host memory the kernel says is available now (/proc/meminfo's MemAvailable), or nullopt where it cannot be read.
std::optional<int64_t> available_host_bytes();
// A generous estimate of what one training step of `config` holds: weights, gradients and AdamW's two moments,
// activations kept for backward (the attention scores and the logits dominate), and the loader's buffers.
double estimated_step_bytes(const RunConfig& config);

// glibc returns every freed block over its mmap threshold (the logits and their gradient, 100 MB at the mini preset)
// to the kernel at once, so each step page-faults and zeroes them again: a third of a CPU step, measured with perf.
// This keeps freed memory in the process, as a caching allocator does (mallopt: no mmap, no trimming); call it first
// thing in main. Python rows run under the same policy through malloc_policy_tunables(), so the two compare fairly.
void keep_freed_memory();
// The GLIBC_TUNABLES value that gives a child process the same policy.
std::string malloc_policy_tunables();

}  // namespace stepwise::bench
