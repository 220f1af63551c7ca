// resolve_run: what the command line left open, filled from the device, the preset and the suite, in one place.
#include "ablations/resolve.h"

#include "bench/device.h"

namespace stepwise::ablations {

namespace {

// Timing defaults. A GPU step is stable, so a tight noise target is cheap; a shared 2-core CPU is noisy, so
// its target is looser and its time cap short enough for a whole suite to run in minutes.
struct TimingDefaults {
  int64_t warmup;
  size_t min_steps, max_steps;
  double max_noise, max_time_s;
};
constexpr TimingDefaults kCudaTiming{5, 20, 500, 0.005, 30.0};
constexpr TimingDefaults kCpuTiming{3, 10, 100, 0.02, 10.0};
// --trace: enough steps to average kernel counts over, few enough to keep the trace small.
constexpr size_t kTraceSteps = 3;

// Command line, then the suite's value for this device kind, then its value for every device, then the default.
std::string option(const Request& r, const Suite& suite, const c10::Device& device, const std::string& given,
                   const char* cli, const char* key, const char* fallback) {
  if (r.has(cli)) return given;
  if (auto kind = suite.device_options.find(device.is_cuda() ? "cuda" : "cpu"); kind != suite.device_options.end())
    if (auto it = kind->second.find(key); it != kind->second.end()) return it->second;
  if (auto it = suite.options.find(key); it != suite.options.end()) return it->second;
  return fallback;
}

}  // namespace

std::string default_preset(const c10::Device& device) { return device.is_cuda() ? "gpt2-124m" : "mini"; }

void resolve_run(Request& r, const Suite& suite) {
  auto& run = r.run;
  try {
    run.device = bench::resolve_device(r.device);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (!r.has("--preset")) run.preset = default_preset(run.device);
  const auto& preset = model::preset(run.preset);
  if (!r.has("--batch-size")) run.batch_size = preset.default_batch_size;
  if (!r.has("--seq-len")) run.seq_len = preset.default_seq_len;
  if (run.seq_len > preset.config.context_length())
    throw UsageError("--seq-len " + std::to_string(run.seq_len) + " is longer than preset " + run.preset +
                     "'s context length " + std::to_string(preset.config.context_length()));

  const auto& d = run.device.is_cuda() ? kCudaTiming : kCpuTiming;
  auto& t = run.timing;
  if (!r.has("--warmup")) t.warmup = d.warmup;
  if (!r.has("--steps")) t.stop.min_steps = d.min_steps;
  if (!r.has("--max-steps")) t.stop.max_steps = d.max_steps;
  t.stop.max_steps = std::max(t.stop.max_steps, t.stop.min_steps);
  if (!r.has("--max-noise")) t.stop.max_noise = d.max_noise;
  if (!r.has("--max-time")) t.stop.max_time_s = d.max_time_s;
  t.check_every = std::min<size_t>(t.check_every, t.stop.min_steps);
  run.trace_steps = r.trace ? kTraceSteps : 0;
  try {
    t.host_sync = bench::host_sync_from_string(r.host_sync);
    if (r.data) run.data.path = *r.data;
    run.data.format = bench::token_file_format_from_string(r.data_format);
    run.adamw_baseline = bench::adamw_kind_from_string(r.adamw_baseline);
    const auto& dev = run.device;
    run.bf16_mode = bench::bf16_mode_from_string(option(r, suite, dev, r.bf16_mode, "--bf16-mode", "bf16_mode", "pure"));
    run.pinned_mode =
        bench::pinned_mode_from_string(option(r, suite, dev, r.pinned_mode, "--pinned-mode", "pinned_mode", "async"));
    // The preset's model, with how flash would run; the flags themselves are applied per configuration.
    run.model = preset.config;
    run.model.sdpa_backend(
        model::sdpa_backend_from_string(option(r, suite, dev, r.sdpa_backend, "--sdpa-backend", "sdpa_backend", "auto")));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

}  // namespace stepwise::ablations
