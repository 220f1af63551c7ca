// Peak memory over the measured steps, per device: the CUDA caching allocator's own statistics, or the process's
// peak RSS on a CPU, with what the window covered.
#include "bench/memory.h"

#ifdef STEPWISE_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include <fstream>
#include <string>

namespace stepwise::bench {

namespace {

// A field of /proc/self/status in kB, as bytes.
std::optional<int64_t> proc_status_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;
  return std::nullopt;
}

}  // namespace

bool reset_peak_memory(const c10::Device& device, const char* clear_refs) {
#ifdef STEPWISE_WITH_CUDA
  if (device.is_cuda()) {
    c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
    return true;
  }
#endif
  // "5" resets the peak resident set size (Linux >= 4.0). The kernel answers the write itself, so the flush is
  // what fails when it refuses (no such file, a read-only /proc, an older kernel).
  std::ofstream out(clear_refs);
  out << "5" << std::flush;
  return out.good();
}

MemoryStats read_memory(const c10::Device& device) {
  MemoryStats m;
#ifdef STEPWISE_WITH_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    constexpr auto kAll = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    m.kind = "cuda_caching_allocator";
    m.peak_allocated_bytes = stats.allocated_bytes[kAll].peak;
    m.peak_reserved_bytes = stats.reserved_bytes[kAll].peak;
    m.current_allocated_bytes = stats.allocated_bytes[kAll].current;
    m.current_reserved_bytes = stats.reserved_bytes[kAll].current;
    return m;
  }
#endif
  m.kind = "process_rss";
  m.peak_rss_bytes = proc_status_bytes("VmHWM");
  // One column for tables: on CPU the "reserved" peak is the process's peak RSS.
  m.peak_reserved_bytes = m.peak_rss_bytes;
  m.current_reserved_bytes = proc_status_bytes("VmRSS");
  return m;
}

}  // namespace stepwise::bench
