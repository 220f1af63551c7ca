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

// Claims CUPTI for the whole process, once: subscribes (so a conflict with another tool — torch's profiler/Kineto,
// Nsight, KINETO_USE_DAEMON — is reported instead of silently losing records) and registers the activity buffers.
// Call it at start-up, before any CUDA graph is captured: subscribing after a capture, or finalizing and subscribing
// again for every configuration, is a known way to crash CUPTI. It never detaches; between traced passes no
// activity kind and no callback domain is enabled, so configurations timed later pay nothing for it. Later calls
// return the first call's answer: nullopt, or why tracing is unavailable.
std::optional<std::string> attach_cupti();

// One traced pass: enables kernel and memcpy activity records, and takes them back. stepwise never starts torch's
// profiler, which would want the same subscriber slot.
class CuptiTracer {
 public:
  CuptiTracer();
  ~CuptiTracer();
  CuptiTracer(const CuptiTracer&) = delete;
  CuptiTracer& operator=(const CuptiTracer&) = delete;

  // Begins collecting (attaching CUPTI first if nobody did); returns the reason when tracing is unavailable (no
  // CUPTI in this build, another subscriber, an activity kind that cannot be enabled). On failure nothing stays
  // enabled.
  std::optional<std::string> start();
  // A timestamp in the clock of the activity records.
  uint64_t now() const;
  // Call after the device has finished the traced work: disables and force-flushes.
  TraceRecords stop();

 private:
  bool active_ = false;
};

}  // namespace stepwise::bench
