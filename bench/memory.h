// Peak memory over the measured steps: the CUDA caching allocator's stats, or the process's peak RSS on CPU.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <optional>
#include <string>

namespace stepwise::bench {

struct MemoryStats {
  std::string kind;  // "cuda_caching_allocator" or "process_rss"
  std::optional<int64_t> peak_allocated_bytes, peak_reserved_bytes;
  std::optional<int64_t> current_allocated_bytes, current_reserved_bytes;
  std::optional<int64_t> peak_rss_bytes;
};

// Starts a new peak window (CUDA: resetPeakStats; CPU: /proc/self/clear_refs resets VmHWM where permitted).
void reset_peak_memory(const c10::Device& device);
MemoryStats read_memory(const c10::Device& device);

}  // namespace stepwise::bench
