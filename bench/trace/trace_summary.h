// From raw kernel and memcpy activity records to what a person asks of a traced step: kernels per step, busy
// and idle time, the top kernels, which attention kernel ran, and whether host-to-device copies were pinned.
// Plain C++ so it is tested on synthetic records anywhere.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stepwise::bench {

struct KernelRecord {
  std::string name;  // demangled
  uint64_t start_ns = 0, end_ns = 0;
};

struct MemcpyRecord {
  enum class Kind { HostToDevice, DeviceToHost, DeviceToDevice, Other };
  Kind kind = Kind::Other;
  bool pinned_source = false;  // for host-to-device: page-locked (pinned) or pageable host memory
  uint64_t bytes = 0;
  uint64_t start_ns = 0, end_ns = 0;
};

// One traced step, bracketed on the host by timestamps in CUPTI's clock: the step's device work starts after
// `begin_ns` (it was launched after) and ends before `end_ns` (the host waited for it). Windows follow each
// other (a step's begin is the previous step's end), so no record falls between them.
struct StepWindow {
  uint64_t begin_ns = 0, end_ns = 0;
};

struct TopKernel {
  std::string name;
  size_t count = 0;
  double total_ms = 0, mean_us = 0;
};

struct TraceSummary {
  size_t steps_traced = 0;
  size_t invalid_records = 0;  // kernel records with a zero or reversed timestamp (CUPTI short of buffer space)
  size_t dropped_records = 0;  // records CUPTI reported as dropped
  double kernels_per_step = 0;
  double kernel_ms_per_step = 0;  // union of kernel intervals (concurrent kernels counted once)
  double idle_ms_per_step = 0;    // gaps between kernels from a step's first kernel to its last
  double busy_fraction = 0;       // kernel time / (kernel time + idle time)
  std::vector<TopKernel> top_kernels;
  std::string attention_kernel;  // flash, efficient, cudnn, math or unknown
  size_t h2d_count = 0;
  uint64_t h2d_bytes = 0;
  double h2d_gbps = 0;
  std::optional<std::string> h2d_source;  // pinned, pageable, mixed; none without copies
};

// "flash", "efficient", "cudnn", "math" (the explicit softmax path) or "unknown", from a step's kernel names.
std::string attention_kernel_family(const std::vector<KernelRecord>& kernels);

// Records with a zero or reversed timestamp are left out and counted, never summed (unsigned time would wrap).
TraceSummary summarize_trace(const std::vector<KernelRecord>& kernels, const std::vector<MemcpyRecord>& memcpys,
                             const std::vector<StepWindow>& steps, size_t top_k = 10);

// The `trace` object of a result document; `unavailable` gives {"status": "unavailable", "reason": ...}, with
// "profiler_loaded": false where CUPTI itself could not be had (not loaded, another tool holding it): the node's
// limit, which the gpu tests skip naming, not a fault of the trace.
nlohmann::json trace_json(const TraceSummary& summary);
nlohmann::json trace_unavailable_json(const std::string& reason, bool profiler_loaded = true);

}  // namespace stepwise::bench
