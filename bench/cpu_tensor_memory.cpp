// A counting CPU allocator: c10::alloc_cpu plus a header that remembers each block's size, so the bytes held by CPU
// tensors, and their peak, are known the way the CUDA caching allocator knows its own. It reports to the profiler as
// c10's default CPU allocator does, so --count-ops sees the C++ row's CPU allocations as it sees the Python row's.
#include "bench/cpu_tensor_memory.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/alignment.h>
#include <c10/core/impl/alloc_cpu.h>

#include <atomic>
#include <cstring>

namespace stepwise::bench {

namespace {

// The header keeps the block's alignment (c10's gAlignment, 64 bytes on a server CPU).
constexpr size_t kHeader = c10::gAlignment;
static_assert(kHeader >= sizeof(size_t));

std::atomic<int64_t> current_bytes{0}, peak_bytes{0};
std::atomic<bool> installed{false};

void raise_peak(int64_t now) {
  int64_t peak = peak_bytes.load(std::memory_order_relaxed);
  while (now > peak && !peak_bytes.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

// As c10's DefaultCPUAllocator (ProfiledCPUMemoryReporter): a [memory] event of +n bytes per allocation and -n per
// free, only while this thread's profiler records memory, and none for an empty block.
void report_to_profiler(void* data, int64_t signed_bytes, int64_t held) {
  if (signed_bytes == 0 || !c10::memoryProfilingEnabled()) return;
  c10::reportMemoryUsageToProfiler(data, signed_bytes, static_cast<size_t>(held), /*total_reserved=*/0,
                                   c10::Device(c10::DeviceType::CPU));
}

void counted_free(void* ptr) {
  if (!ptr) return;
  char* block = static_cast<char*>(ptr) - kHeader;
  size_t n = 0;
  std::memcpy(&n, block, sizeof n);
  const int64_t held =
      current_bytes.fetch_sub(static_cast<int64_t>(n), std::memory_order_relaxed) - static_cast<int64_t>(n);
  report_to_profiler(ptr, -static_cast<int64_t>(n), held);
  c10::free_cpu(block);
}

class CountingCpuAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) override {
    char* block = static_cast<char*>(c10::alloc_cpu(n + kHeader));
    std::memcpy(block, &n, sizeof n);
    const int64_t held =
        current_bytes.fetch_add(static_cast<int64_t>(n), std::memory_order_relaxed) + static_cast<int64_t>(n);
    raise_peak(held);
    void* data = block + kHeader;
    report_to_profiler(data, static_cast<int64_t>(n), held);
    // data == context, so raw_allocate and raw_deleter work as with c10's own CPU allocator.
    return {data, data, &counted_free, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &counted_free; }
  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }
};

}  // namespace

void count_cpu_tensor_bytes() {
  static CountingCpuAllocator allocator;
  if (installed.exchange(true)) return;
  // Priority above c10's default (0), so nothing later replaces it by accident.
  c10::SetCPUAllocator(&allocator, /*priority=*/10);
}

bool counting_cpu_tensor_bytes() { return installed.load(); }

CpuTensorBytes cpu_tensor_bytes() { return {current_bytes.load(), peak_bytes.load()}; }

void reset_cpu_tensor_peak() { peak_bytes.store(current_bytes.load()); }

}  // namespace stepwise::bench
