// The --trace pass: a few steps under CUPTI after the timed ones (never during them), bracketed so every kernel
// belongs to its step, summarised into the result.
#include "bench/trace/trace_pass.h"

#include "bench/device.h"
#include "bench/oom.h"
#include "bench/trace/cupti_tracer.h"

namespace stepwise::bench {

nlohmann::json trace_steps(const c10::Device& device, Step& step, size_t steps) {
  if (!device.is_cuda()) return trace_unavailable_json("no GPU");
  TraceRecords records;
  std::vector<StepWindow> windows;
  std::optional<std::string> unavailable;
  try {
    synchronize(device);
    CuptiTracer tracer;
    // Data parallel: the steps run even when this rank cannot trace, so every rank joins the same all-reduces.
    unavailable = tracer.start();
    const auto now = [&] { return unavailable ? uint64_t{0} : tracer.now(); };  // CUPTI stays untouched without it
    // One step outside the windows takes CUPTI's first-launch instrumentation cost.
    step();
    synchronize(device);
    uint64_t mark = now();
    for (size_t i = 0; i < steps; ++i) {
      step();
      synchronize(device);
      windows.push_back({mark, now()});
      mark = windows.back().end_ns;
    }
    if (!unavailable) records = tracer.stop();
  } catch (const std::exception& e) {
    // The timed steps are already measured; a trace that fails costs only the trace.
    return trace_unavailable_json("the traced pass failed: " + short_message(e));
  }
  if (unavailable) return trace_unavailable_json(*unavailable, /*profiler_loaded=*/false);  // the rows still ran
  if (records.problem) return trace_unavailable_json(*records.problem);
  auto summary = summarize_trace(records.kernels, records.memcpys, windows);
  summary.dropped_records = records.dropped;
  if (summary.kernels_per_step == 0)
    return trace_unavailable_json("CUPTI delivered no kernel records for the traced steps");
  return trace_json(summary);
}

}  // namespace stepwise::bench
