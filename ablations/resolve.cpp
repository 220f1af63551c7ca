// resolve_run: what the command line left open, filled from the device, the preset and the suite, in one place.
#include "ablations/resolve.h"

#include "bench/device.h"

#include <algorithm>
#include <string>

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
  // The preset's model with the command line's dimensions, and how flash would run; the flags themselves are applied
  // per configuration.
  run.model = model_with_overrides(r, preset);
  run.model.sdpa_backend(choose(&FlagModes::sdpa_backend, r, suite, run.device, model::SdpaBackend::Auto));
  if (!r.has("--batch-size")) run.batch_size = preset.default_batch_size;
  if (!r.has("--seq-len")) run.seq_len = default_seq_len(preset, run.model);
  if (run.seq_len > run.model.context_length())
    throw UsageError("--seq-len " + std::to_string(run.seq_len) + " is longer than " +
                     (r.has("--context-length")
                          ? "the context length " + std::to_string(run.model.context_length()) + " (--context-length)"
                          : "preset " + run.preset + "'s context length " + std::to_string(run.model.context_length()) +
                                " (--context-length sets another)"));

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
  run.target = target_options(r);
  run.bf16_mode = choose(&FlagModes::bf16_mode, r, suite, run.device, bench::Bf16Mode::Pure);
  run.pinned_mode = choose(&FlagModes::pinned_mode, r, suite, run.device, bench::PinnedMode::Async);
  run.model.fp8_scaling(choose(&FlagModes::fp8_scaling, r, suite, run.device, model::Fp8Scaling::Tensorwise));
  run.model.checkpoint_mode(choose(&FlagModes::checkpoint_mode, r, suite, run.device, model::CheckpointMode::Full));
  run.host_allocator_mode =
      choose(&FlagModes::host_allocator_mode, r, suite, run.device, bench::HostAllocatorMode::GlibcTunables);
  // Training to a target decays the LR as real training does (nanoGPT's cosine); throughput rows keep the published
  // tables' constant LR.
  if (run.target && !r.has("--lr-schedule")) run.lr_schedule.kind = bench::LrScheduleKind::Cosine;
  // The cosine decay ends at the last step the run can take, unless told otherwise.
  if (!r.has("--lr-decay-steps")) {
    const auto target = target_options(r);
    run.lr_schedule.decay_steps = target ? target->max_steps : t.warmup + static_cast<int64_t>(t.stop.max_steps);
  }
  if (run.lr_schedule.kind == bench::LrScheduleKind::Constant &&
      (r.has("--lr-warmup-steps") || r.has("--lr-decay-steps") || r.has("--lr-min-ratio")))
    throw UsageError("--lr-warmup-steps, --lr-decay-steps and --lr-min-ratio shape --lr-schedule=cosine; add it");
}

std::optional<bench::TargetOptions> target_options(const Request& r) {
  if (!r.target_loss) {
    for (const char* option : {"--eval-every", "--eval-batches", "--seeds"})
      if (r.has(option)) throw UsageError(std::string(option) + " is for time to a target loss: add --target-loss");
    return std::nullopt;
  }
  bench::TargetOptions o;
  o.loss = *r.target_loss;
  o.seeds = r.seeds;
  o.eval_every = r.eval_every;
  o.eval_batches = r.eval_batches;
  o.max_steps = r.has("--max-steps") ? static_cast<int64_t>(r.run.timing.stop.max_steps) : kTargetMaxSteps;
  o.max_time_s = r.has("--max-time")      ? r.run.timing.stop.max_time_s
                 : r.run.device.is_cuda() ? kTargetMaxTimeCudaS
                                          : kTargetMaxTimeCpuS;
  o.warmup_steps = r.run.timing.warmup;
  return o;
}

model::GPTConfig model_with_overrides(const Request& r, const model::Preset& preset) {
  auto m = preset.config;
  const auto& given = r.run.model;
  if (r.has("--n-layer")) m.n_layer(given.n_layer());
  if (r.has("--n-head")) m.n_head(given.n_head());
  if (r.has("--n-embd")) m.n_embd(given.n_embd());
  if (r.has("--context-length")) m.context_length(given.context_length());
  if (r.has("--vocab-size")) m.vocab_size(given.vocab_size());
  if (r.has("--dropout")) m.dropout(given.dropout());
  if (r.has("--ce-chunk-rows")) m.ce_chunk_rows(given.ce_chunk_rows());
  if (r.has("--fp8-head")) m.fp8_head(given.fp8_head());
  if (r.has("--fp8-every-layer")) m.fp8_every_layer(given.fp8_every_layer());
  if (m.n_embd() % m.n_head() != 0) {
    const auto named = [&](const char* option, const char* field, int64_t v) {
      return std::string(field) + " " + std::to_string(v) + " (" +
             (r.has(option) ? std::string(option) : "preset " + preset.name + "'s") + ")";
    };
    throw UsageError(named("--n-head", "n_head", m.n_head()) + " must divide " +
                     named("--n-embd", "n_embd", m.n_embd()) + ": each head gets n_embd / n_head channels");
  }
  try {
    m.validate();
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("model: ") + e.what());
  }
  return m;
}

int64_t default_seq_len(const model::Preset& preset, const model::GPTConfig& model) {
  return std::min(preset.default_seq_len, model.context_length());
}

void take_data_vocabulary(Request& r, const bench::TokenSource& source) {
  if (!source.vocab_size) return;
  auto& model = r.run.model;
  const auto& p = source.provenance;
  if (!r.has("--vocab-size")) {
    model.vocab_size(*source.vocab_size);
    return;
  }
  if (model.vocab_size() < *source.vocab_size)
    throw UsageError("--vocab-size " + std::to_string(model.vocab_size()) + " is smaller than the data's vocabulary " +
                     std::to_string(*source.vocab_size) + " (declared in its " +
                     p.value("vocab_source", std::string("meta.json")) +
                     "): its token ids would not fit; drop --vocab-size to take the data's");
}

}  // namespace stepwise::ablations
