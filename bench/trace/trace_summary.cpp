// Turns CUPTI's kernel and memcpy records into what a reader wants per step: kernel count, busy and idle time, the
// top kernels, the attention kernel that really ran, and whether host copies came from pinned memory.
#include "bench/trace/trace_summary.h"

#include <algorithm>
#include <array>
#include <map>
#include <utility>

namespace stepwise::bench {

namespace {

constexpr double kNsPerMs = 1e6;

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// Kernel-name fragments of each SDPA backend, as PyTorch's CUDA kernels are named.
// FlashAttention-3 (off by default in torch) names its Hopper kernels flash::FlashAttn...Sm90.
constexpr std::array<const char*, 4> kFlash{"flash_fwd", "flash_bwd", "pytorch_flash::", "FlashAttn"};
constexpr std::array<const char*, 4> kEfficient{"fmha_cutlass", "AttentionKernel", "efficient_attention", "mem_eff"};
constexpr std::array<const char*, 2> kCudnn{"cudnn_generated_fort_native_sdpa", "cudnn_sdpa"};

// The explicit path (and SDPA's math backend) is a softmax between two batched matmuls. The loss's log-softmax
// over the vocabulary is a softmax kernel too, with a LogSoftMax epilogue; it does not count.
bool attention_softmax(const KernelRecord& k) {
  if (contains(k.name, "LogSoftMax")) return false;
  return contains(k.name, "softmax_warp_forward") || contains(k.name, "SoftMaxForward");
}

template <size_t N>
bool any_of(const std::vector<KernelRecord>& kernels, const std::array<const char*, N>& parts) {
  return std::any_of(kernels.begin(), kernels.end(), [&](const KernelRecord& k) {
    return std::any_of(parts.begin(), parts.end(), [&](const char* p) { return contains(k.name, p); });
  });
}

// Length of the union of [start, end) intervals.
uint64_t union_length(std::vector<std::pair<uint64_t, uint64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  uint64_t total = 0, cur_start = 0, cur_end = 0;
  bool open = false;
  for (const auto& [s, e] : intervals) {
    if (!open || s > cur_end) {
      if (open) total += cur_end - cur_start;
      cur_start = s;
      cur_end = e;
      open = true;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (open) total += cur_end - cur_start;
  return total;
}

}  // namespace

std::string attention_kernel_family(const std::vector<KernelRecord>& kernels) {
  if (any_of(kernels, kCudnn)) return "cudnn";
  if (any_of(kernels, kFlash)) return "flash";
  if (any_of(kernels, kEfficient)) return "efficient";
  if (std::any_of(kernels.begin(), kernels.end(), attention_softmax)) return "math";
  return "unknown";
}

TraceSummary summarize_trace(const std::vector<KernelRecord>& kernels, const std::vector<MemcpyRecord>& memcpys,
                             const std::vector<StepWindow>& steps, size_t top_k) {
  TraceSummary s;
  s.steps_traced = steps.size();
  if (steps.empty()) return s;
  const auto valid = [](uint64_t start, uint64_t end) { return start != 0 && end >= start; };
  size_t kernel_count = 0;
  uint64_t busy = 0, idle = 0;
  std::vector<KernelRecord> in_steps;
  for (const auto& w : steps) {
    std::vector<std::pair<uint64_t, uint64_t>> intervals;
    uint64_t first = UINT64_MAX, last = 0;
    for (const auto& k : kernels)
      if (valid(k.start_ns, k.end_ns) && k.start_ns >= w.begin_ns && k.start_ns < w.end_ns) {
        intervals.emplace_back(k.start_ns, k.end_ns);
        first = std::min(first, k.start_ns);
        last = std::max(last, k.end_ns);
        in_steps.push_back(k);
      }
    kernel_count += intervals.size();
    if (intervals.empty()) continue;
    const uint64_t step_busy = union_length(intervals);
    busy += step_busy;
    idle += (last - first) - step_busy;
  }
  s.invalid_records = static_cast<size_t>(std::count_if(
      kernels.begin(), kernels.end(), [&](const KernelRecord& k) { return !valid(k.start_ns, k.end_ns); }));
  const double n = static_cast<double>(steps.size());
  s.kernels_per_step = static_cast<double>(kernel_count) / n;
  s.kernel_ms_per_step = static_cast<double>(busy) / kNsPerMs / n;
  s.idle_ms_per_step = static_cast<double>(idle) / kNsPerMs / n;
  s.busy_fraction = busy + idle > 0 ? static_cast<double>(busy) / static_cast<double>(busy + idle) : 0.0;

  std::map<std::string, TopKernel> by_name;
  for (const auto& k : in_steps) {
    auto& t = by_name[k.name];
    t.name = k.name;
    ++t.count;
    t.total_ms += static_cast<double>(k.end_ns - k.start_ns) / kNsPerMs;
  }
  for (auto& [name, t] : by_name) {
    t.mean_us = t.total_ms * 1000.0 / static_cast<double>(t.count);
    s.top_kernels.push_back(t);
  }
  std::sort(s.top_kernels.begin(), s.top_kernels.end(),
            [](const TopKernel& a, const TopKernel& b) { return a.total_ms > b.total_ms; });
  if (s.top_kernels.size() > top_k) s.top_kernels.resize(top_k);
  s.attention_kernel = attention_kernel_family(in_steps);

  uint64_t copy_ns = 0;
  size_t pinned = 0;
  for (const auto& m : memcpys) {
    if (m.kind != MemcpyRecord::Kind::HostToDevice || !valid(m.start_ns, m.end_ns)) continue;
    const bool in_a_step = std::any_of(steps.begin(), steps.end(), [&](const StepWindow& w) {
      return m.start_ns >= w.begin_ns && m.start_ns < w.end_ns;
    });
    if (!in_a_step) continue;
    ++s.h2d_count;
    s.h2d_bytes += m.bytes;
    copy_ns += m.end_ns - m.start_ns;
    pinned += m.pinned_source;
  }
  if (s.h2d_count > 0) {
    s.h2d_source = pinned == s.h2d_count ? "pinned" : pinned == 0 ? "pageable" : "mixed";
    s.h2d_gbps = copy_ns > 0 ? static_cast<double>(s.h2d_bytes) / static_cast<double>(copy_ns) : 0.0;  // B/ns = GB/s
  }
  return s;
}

nlohmann::json trace_json(const TraceSummary& s) {
  auto top = nlohmann::json::array();
  for (const auto& t : s.top_kernels)
    top.push_back({{"name", t.name}, {"count", t.count}, {"total_ms", t.total_ms}, {"mean_us", t.mean_us}});
  return {{"status", "ok"},
          {"reason", nullptr},
          {"steps_traced", s.steps_traced},
          {"invalid_records", s.invalid_records},
          {"dropped_records", s.dropped_records},
          {"kernels_per_step", s.kernels_per_step},
          {"kernel_ms_per_step", s.kernel_ms_per_step},
          {"idle_ms_per_step", s.idle_ms_per_step},
          {"busy_fraction", s.busy_fraction},
          {"top_kernels", top},
          {"attention_kernel", s.attention_kernel},
          {"memcpy",
           {{"h2d_count", s.h2d_count},
            {"h2d_bytes", s.h2d_bytes},
            {"h2d_gbps", s.h2d_gbps},
            {"h2d_source", s.h2d_source ? nlohmann::json(*s.h2d_source) : nlohmann::json()}}}};
}

nlohmann::json trace_unavailable_json(const std::string& reason, bool profiler_loaded) {
  nlohmann::json out = {{"status", "unavailable"}, {"reason", "trace unavailable: " + reason}};
  if (!profiler_loaded) out["profiler_loaded"] = false;
  return out;
}

}  // namespace stepwise::bench
