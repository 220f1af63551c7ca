// Peak memory over the measured steps: the CUDA caching allocator's stats, or the process's peak RSS on CPU.
#pragma once

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

}  // namespace stepwise::bench
