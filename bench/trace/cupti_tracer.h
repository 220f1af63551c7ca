// A short CUPTI Activity trace of kernels and memcpys, for a pass run after the timed steps and never during them.
#pragma once

#include "bench/trace/trace_summary.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stepwise::bench {

// CUPTI allows one subscriber per process and torch's profiler (Kineto) takes it when started: stepwise never
// starts that profiler. start() subscribes first, so a conflict (another tool, KINETO_USE_DAEMON) is reported as
// an error instead of silently losing records.
class CuptiTracer {
 public:
  CuptiTracer();
  ~CuptiTracer();
  CuptiTracer(const CuptiTracer&) = delete;
  CuptiTracer& operator=(const CuptiTracer&) = delete;

  // Begins collecting; returns the reason when tracing is unavailable (no CUPTI in this build, another
  // subscriber, an activity kind that cannot be enabled).
  std::optional<std::string> start();
  // A timestamp in the clock of the activity records.
  uint64_t now() const;
  // Flushes and stops; the records collected since start().
  void stop(std::vector<KernelRecord>& kernels, std::vector<MemcpyRecord>& memcpys);

 private:
  bool active_ = false;
  void* subscriber_ = nullptr;
};

}  // namespace stepwise::bench
