// resolve_settings.
#include "ablations/settings.h"

#include "bench/device.h"
#include "model/presets.h"

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
std::string option(const Suite& suite, const c10::Device& device, const std::optional<std::string>& given,
                   const char* key, const char* fallback) {
  if (given) return *given;
  if (auto kind = suite.device_options.find(device.is_cuda() ? "cuda" : "cpu"); kind != suite.device_options.end())
    if (auto it = kind->second.find(key); it != kind->second.end()) return it->second;
  if (auto it = suite.options.find(key); it != suite.options.end()) return it->second;
  return fallback;
}

}  // namespace

std::string default_preset(const c10::Device& device) { return device.is_cuda() ? "gpt2-124m" : "mini"; }

Settings resolve_settings(const Request& r, const Suite& suite) {
  Settings s;
  try {
    s.device = bench::resolve_device(r.device);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  s.preset = r.preset.value_or(default_preset(s.device));
  const auto& preset = model::preset(s.preset);
  s.batch_size = r.batch_size.value_or(preset.default_batch_size);
  s.seq_len = r.seq_len.value_or(preset.default_seq_len);
  if (s.seq_len > preset.config.context_length())
    throw UsageError("--seq-len " + std::to_string(s.seq_len) + " is longer than preset " + s.preset +
                     "'s context length " + std::to_string(preset.config.context_length()));
  s.seed = r.seed;
  s.lr = r.lr;

  const auto& d = s.device.is_cuda() ? kCudaTiming : kCpuTiming;
  s.timing.warmup = r.warmup.value_or(d.warmup);
  s.timing.stop.min_steps = static_cast<size_t>(r.min_steps.value_or(static_cast<int64_t>(d.min_steps)));
  s.timing.stop.max_steps = static_cast<size_t>(r.max_steps.value_or(static_cast<int64_t>(d.max_steps)));
  s.timing.stop.max_steps = std::max(s.timing.stop.max_steps, s.timing.stop.min_steps);
  s.timing.stop.max_noise = r.max_noise.value_or(d.max_noise);
  s.timing.stop.max_time_s = r.max_time_s.value_or(d.max_time_s);
  s.timing.host_sync = bench::host_sync_from_string(r.host_sync);
  s.timing.check_every = std::min<size_t>(s.timing.check_every, s.timing.stop.min_steps);

  if (r.data) s.data.path = *r.data;
  s.data.format = bench::token_file_format_from_string(r.data_format);
  s.max_batch_limit = r.max_batch_limit;
  s.trace_steps = r.trace ? kTraceSteps : 0;
  s.disabled = r.disable;
  s.adamw_baseline = bench::adamw_kind_from_string(r.adamw_baseline);
  try {
    s.flag_options.bf16_mode = bench::bf16_mode_from_string(option(suite, s.device, r.bf16_mode, "bf16_mode", "pure"));
    const auto pinned = option(suite, s.device, r.pinned_mode, "pinned_mode", "async");
    if (pinned != "async" && pinned != "blocking")
      throw std::invalid_argument("unknown pinned mode '" + pinned + "' (valid: async, blocking)");
    s.flag_options.pinned_mode = pinned == "async" ? bench::CopyMode::PinnedAsync : bench::CopyMode::PinnedBlocking;
    s.flag_options.sdpa_backend = model::sdpa_backend_from_string(option(suite, s.device, r.sdpa_backend, "sdpa_backend", "auto"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return s;
}

}  // namespace stepwise::ablations
