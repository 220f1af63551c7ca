// resolve_run: what the command line left open, filled from the device, the preset and the suite, in one place.
#include "ablations/resolve.h"

#include "bench/device.h"

namespace stepwise::ablations {

namespace {

// Timing defaults. A GPU step is stable, so a tight noise target is cheap. A shared CPU is noisy, so its target is
// looser, and its cap keeps ./run_all.sh's four suites to minutes where a bf16 step emulated without avx512_bf16
// takes seconds (such configurations stop at the cap, marked short). Two warm-up steps suffice there: the first
// allocates, the second already runs at the steady-state footprint.
constexpr TimingDefaults kCudaTiming{5, 20, 500, 0.005, 30.0};
constexpr TimingDefaults kCpuTiming{2, 10, 100, 0.02, 5.0};
// --trace: enough steps to average kernel counts over, few enough to keep the trace small.
constexpr size_t kTraceSteps = 3;

// Command line, then the suite's value for this device kind, then its value for every device, then the default.
template <typename T>
T choose(std::optional<T> FlagModes::*mode, const Request& r, const Suite& suite, const c10::Device& device,
         T fallback) {
  if (r.modes.*mode) return *(r.modes.*mode);
  if (auto kind = suite.device_modes.find(device.is_cuda() ? "cuda" : "cpu"); kind != suite.device_modes.end())
    if (kind->second.*mode) return *(kind->second.*mode);
  return (suite.modes.*mode).value_or(fallback);
}

}  // namespace

// A CPU's default is the tiny preset: the real vocabulary and every code path, at a size where a CPU step is quick
// even where bf16 is emulated.
const TimingDefaults& timing_defaults(bool cuda) { return cuda ? kCudaTiming : kCpuTiming; }

std::string default_preset(const c10::Device& device) { return device.is_cuda() ? "gpt2-124m" : "tiny"; }

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

  const auto& d = timing_defaults(run.device.is_cuda());
  auto& t = run.timing;
  if (!r.has("--warmup")) t.warmup = d.warmup;
  if (!r.has("--steps")) t.stop.min_steps = d.min_steps;
  if (!r.has("--max-steps")) t.stop.max_steps = d.max_steps;
  t.stop.max_steps = std::max(t.stop.max_steps, t.stop.min_steps);
  if (!r.has("--max-noise")) t.stop.max_noise = d.max_noise;
  if (!r.has("--max-time")) t.stop.max_time_s = d.max_time_s;
  t.check_every = std::min<size_t>(t.check_every, t.stop.min_steps);
  run.trace_steps = r.trace ? kTraceSteps : 0;
  if (r.data) run.data.path = *r.data;
  // auto: what Python's torch.optim.AdamW() runs on this device, so the baseline is the reference scripts' own.
  run.adamw_baseline =
      r.adamw_baseline.value_or(run.device.is_cuda() ? bench::AdamWKind::Foreach : bench::AdamWKind::Forloop);
  run.bf16_mode = choose(&FlagModes::bf16_mode, r, suite, run.device, bench::Bf16Mode::Pure);
  run.pinned_mode = choose(&FlagModes::pinned_mode, r, suite, run.device, bench::PinnedMode::Async);
  // The preset's model, with how flash would run; the flags themselves are applied per configuration.
  const double dropout = run.model.dropout();
  run.model = preset.config;
  if (r.has("--dropout")) run.model.dropout(dropout);
  run.model.sdpa_backend(choose(&FlagModes::sdpa_backend, r, suite, run.device, model::SdpaBackend::Auto));
}

}  // namespace stepwise::ablations
