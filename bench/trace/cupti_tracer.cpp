// CuptiTracer: activity buffers handed to CUPTI, records copied out as they complete.
#include "bench/trace/cupti_tracer.h"

#ifdef STEPWISE_WITH_CUDA
#include <cupti.h>
#endif

#include <cxxabi.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>

namespace stepwise::bench {

#ifdef STEPWISE_WITH_CUDA

namespace {

// CUPTI wants 8-byte aligned buffers; 8 MiB holds tens of thousands of kernel records.
constexpr size_t kBufferBytes = size_t{8} << 20;
constexpr size_t kAlignment = 8;

// Completed buffers arrive on CUPTI's thread; records go here until stop() takes them.
struct Collected {
  std::mutex mutex;
  std::vector<KernelRecord> kernels;
  std::vector<MemcpyRecord> memcpys;
  size_t dropped = 0;
};
// Never destroyed: CUPTI's own exit handler may still deliver a buffer after static destructors have run.
Collected& collected() {
  static auto* c = new Collected;
  return *c;
}

std::string demangle(const char* name) {
  if (!name) return "?";
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

std::string cupti_error(CUptiResult r) {
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  return text ? text : "CUPTI error " + std::to_string(static_cast<int>(r));
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, kBufferBytes));
  *size = kBufferBytes;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t, size_t valid_size) {
  auto& c = collected();
  std::lock_guard lock(c.mutex);
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) c.dropped += dropped;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      c.kernels.push_back({demangle(k->name), k->start, k->end});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      MemcpyRecord r;
      switch (m->copyKind) {
        case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: r.kind = MemcpyRecord::Kind::HostToDevice; break;
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: r.kind = MemcpyRecord::Kind::DeviceToHost; break;
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: r.kind = MemcpyRecord::Kind::DeviceToDevice; break;
        default: r.kind = MemcpyRecord::Kind::Other;
      }
      r.pinned_source = m->srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
      r.bytes = m->bytes;
      r.start_ns = m->start;
      r.end_ns = m->end;
      c.memcpys.push_back(r);
    }
  }
  std::free(buffer);
}

// The subscriber exists only to claim (or fail to claim) CUPTI's single slot.
void CUPTIAPI no_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

void disable_activities() {
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
}

}  // namespace

std::optional<std::string> attach_cupti() {
  static const std::optional<std::string> outcome = []() -> std::optional<std::string> {
    CUpti_SubscriberHandle handle = nullptr;
    if (CUptiResult r = cuptiSubscribe(&handle, reinterpret_cast<CUpti_CallbackFunc>(no_callback), nullptr);
        r != CUPTI_SUCCESS) {
      if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        return "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: another tool (torch's profiler/Kineto, Nsight) holds "
               "CUPTI in this process";
      return "cuptiSubscribe failed: " + cupti_error(r);
    }
    if (CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed); r != CUPTI_SUCCESS) {
      cuptiUnsubscribe(handle);
      return "CUPTI activity callbacks: " + cupti_error(r);
    }
    return std::nullopt;  // the handle is kept for the life of the process, on purpose
  }();
  return outcome;
}

CuptiTracer::CuptiTracer() = default;

CuptiTracer::~CuptiTracer() {
  if (active_) stop();
}

std::optional<std::string> CuptiTracer::start() {
  if (auto unavailable = attach_cupti()) return unavailable;
  {
    auto& c = collected();
    std::lock_guard lock(c.mutex);
    c.kernels.clear();
    c.memcpys.clear();
    c.dropped = 0;
  }
  const auto fail = [&](const char* what, CUptiResult r) -> std::optional<std::string> {
    disable_activities();
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    return std::string("CUPTI activity ") + what + ": " + cupti_error(r);
  };
  if (CUptiResult r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); r != CUPTI_SUCCESS)
    return fail("kernels", r);
  if (CUptiResult r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY); r != CUPTI_SUCCESS) return fail("memcpys", r);
  active_ = true;
  return std::nullopt;
}

uint64_t CuptiTracer::now() const {
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

TraceRecords CuptiTracer::stop() {
  TraceRecords out;
  if (!active_) return out;
  disable_activities();
  // Forced: a default flush keeps back any buffer with an incomplete record, and nothing will flush it later.
  if (CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); r != CUPTI_SUCCESS)
    out.problem = "cuptiActivityFlushAll: " + cupti_error(r);
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) out.dropped += dropped;
  active_ = false;
  auto& c = collected();
  std::lock_guard lock(c.mutex);
  out.kernels = std::move(c.kernels);
  out.memcpys = std::move(c.memcpys);
  out.dropped += c.dropped;
  c.kernels.clear();
  c.memcpys.clear();
  c.dropped = 0;
  return out;
}

#else

std::optional<std::string> attach_cupti() { return "this build has no CUDA (CUPTI)"; }
CuptiTracer::CuptiTracer() = default;
CuptiTracer::~CuptiTracer() = default;
std::optional<std::string> CuptiTracer::start() { return attach_cupti(); }
uint64_t CuptiTracer::now() const {
  return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}
TraceRecords CuptiTracer::stop() { return {}; }

#endif

}  // namespace stepwise::bench
