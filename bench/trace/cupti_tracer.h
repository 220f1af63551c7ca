// A short CUPTI Activity trace of kernels and memcpys, for a pass run after the timed steps and never during them.
#pragma once

#include "bench/trace/trace_summary.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stepwise::bench {

// What stop() hands back: the records, how many CUPTI dropped, and what went wrong while stopping.
struct TraceRecords {
  std::vector<KernelRecord> kernels;
  std::vector<MemcpyRecord> memcpys;
  size_t dropped = 0;
  std::optional<std::string> problem;
};

// CUPTI allows one subscriber per process and torch's profiler (Kineto) takes it when started: stepwise never
// starts that profiler. start() subscribes first, so a conflict (another tool, KINETO_USE_DAEMON) is reported as
// an error instead of silently losing records. stop() detaches CUPTI again (cuptiFinalize, as Kineto's teardown
// does on CUDA >= 12.6 even with CUDA graphs), so configurations timed after a traced one run without it.
class CuptiTracer {
 public:
  CuptiTracer();
  ~CuptiTracer();
  CuptiTracer(const CuptiTracer&) = delete;
  CuptiTracer& operator=(const CuptiTracer&) = delete;

  // Begins collecting; returns the reason when tracing is unavailable (no CUPTI in this build, another
  // subscriber, an activity kind that cannot be enabled). On failure nothing stays enabled.
  std::optional<std::string> start();
  // A timestamp in the clock of the activity records.
  uint64_t now() const;
  // Call after the device has finished the traced work: disables, force-flushes and detaches.
  TraceRecords stop();

 private:
  bool active_ = false;
  void* subscriber_ = nullptr;
};

}  // namespace stepwise::bench
