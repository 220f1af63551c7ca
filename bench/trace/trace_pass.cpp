// trace_steps.
#include "bench/trace/trace_pass.h"

#include "bench/device.h"
#include "bench/trace/cupti_tracer.h"

namespace stepwise::bench {

nlohmann::json trace_steps(const c10::Device& device, const StepFn& step, size_t steps) {
  if (!device.is_cuda()) return trace_unavailable_json("no GPU");
  synchronize(device);
  CuptiTracer tracer;
  if (auto why = tracer.start()) return trace_unavailable_json(*why);
  std::vector<StepWindow> windows;
  for (size_t i = 0; i < steps; ++i) {
    StepWindow w;
    w.begin_ns = tracer.now();
    step();
    synchronize(device);
    w.end_ns = tracer.now();
    windows.push_back(w);
  }
  std::vector<KernelRecord> kernels;
  std::vector<MemcpyRecord> memcpys;
  tracer.stop(kernels, memcpys);
  return trace_json(summarize_trace(kernels, memcpys, windows));
}

}  // namespace stepwise::bench
