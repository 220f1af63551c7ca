// The measurement protocol around the step: optional batch probe, warm-up, chunks of timed steps until the noise
// target or a cap, the statistics, memory and MFU; a failure is recorded in the result, never thrown.
#include "bench/measure/runner.h"

#include "bench/device.h"
#include "bench/interrupted.h"
#include "bench/measure/measurement.h"
#include "bench/measure/ranks.h"
#include "bench/oom.h"
#include "bench/step/tf32.h"
#include "bench/step/train_step.h"
#include "bench/trace/op_counts.h"
#include "bench/trace/trace_pass.h"
#include "model/sdpa.h"

#include <ATen/ATen.h>

#include <cstdio>
#include <stdexcept>
#include <utility>

namespace stepwise::bench {

namespace {

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %s", bytes, units[u]);
  return buf;
}

// Tests only (RunHooks::fail_before_step): the step fails before the measured step of that index, as a rank that runs
// out of memory alone would; wrapped around the step so the measurement holds no test code.
class FailingStep final : public Step {
 public:
  FailingStep(std::unique_ptr<Step> step, int64_t fail_at_call) : step_(std::move(step)), fail_at_(fail_at_call) {}
  at::Tensor operator()() override {
    if (calls_++ == fail_at_) throw std::runtime_error("injected failure (STEPWISE_TEST_FAIL_RANK)");
    return (*step_)();
  }
  void time_phases(PhaseMarks* marks) override { step_->time_phases(marks); }
  std::optional<std::string> phase_note() const override { return step_->phase_note(); }
  int64_t warmup_steps(int64_t requested) const override { return step_->warmup_steps(requested); }
  int probe_steps() const override { return step_->probe_steps(); }
  bool opens_memory_window() const override { return step_->opens_memory_window(); }
  void measure_activations() override { step_->measure_activations(); }
  std::string memory_scope() const override { return step_->memory_scope(); }
  std::string allreduce() const override { return step_->allreduce(); }

 private:
  std::unique_ptr<Step> step_;
  int64_t fail_at_, calls_ = 0;
};

// What ran, beside how fast: the AdamW implementation (zero1's sharding of it is the flag's, and the distributed
// section's), the attention kernel flash picked, the layers fp8 ran in FP8.
void describe(const TrainState& state, const RunConfig& config, RunResult& result) {
  result.optimizer = state.zero1() ? state.zero1()->adamw() : state.optimizer->name();
  if (config.model.flash()) {
    const auto& m = config.model;
    result.sdpa_backend_used =
        model::sdpa_backend_that_runs(m.sdpa_backend(), config.batch_size, m.n_head(), config.seq_len, m.head_dim(),
                                      config.bf16 ? at::kBFloat16 : at::kFloat, config.device, m.dropout());
  }
  if (config.model.fp8()) {
    result.fp8_layers = state.model->fp8_layers();
    result.fp8_flops_per_token = state.model->fp8_flops_per_token();
  }
}

// After the measured steps, off the clock: the activation window (every rank: its backward may all-reduce), the
// peak and its split into weights, gradients, optimizer state and activations.
void record_memory(const TrainState& state, Step& step, const Ranks& ranks, const RunConfig& config, bool windowed,
                   RunResult& result) {
  step.measure_activations();
  result.memory = read_memory(config.device);
  // zero1's shards are accounted per rank by ranks.account, from the replicated figure
  const int64_t optimizer_state =
      state.zero1() ? state.zero1()->replicated_state_bytes() : state.optimizer->state_bytes();
  split_peak(*result.memory, state.model->parameters(), config, config.batch_size, optimizer_state);
  ranks.account(state, *result.memory);
  result.memory->scope = windowed ? step.memory_scope()
                                  : "the whole process: /proc/self/clear_refs refused the reset, so the peak covers "
                                    "everything since start-up";
}

void measure(const RunConfig& config, const std::shared_ptr<const Tokens>& tokens, const RunHooks& hooks,
             RunResult& result) {
  // --count-ops: the profiler started once before the first step, so before compile's capture (trace/op_counts.h);
  // where CUPTI cannot load, the counts leave the GPU's side out, saying why, and the row still runs.
  std::optional<std::string> gpu_side_unavailable;
  if (config.count_steps > 0) gpu_side_unavailable = prepare_profiler(config.device);
  TrainState state = make_train_state(config, tokens, hooks.collectives);
  describe(state, config, result);
  std::unique_ptr<Step> step = make_step(state, config);
  if (hooks.fail_before_step)
    step = std::make_unique<FailingStep>(
        std::move(step), step->warmup_steps(config.timing.warmup) + static_cast<int64_t>(*hooks.fail_before_step));
  const auto ranks = make_ranks(hooks.collectives);

  Measurement measurement(config, *step, *ranks, hooks, result);
  measurement.warm_up();
  measurement.measure_steps();
  ranks->record(state, *step, config, measurement.times(), result);
  record_memory(state, *step, *ranks, config, measurement.windowed(), result);
  if (config.trace_steps > 0) result.trace = trace_steps(config.device, *step, config.trace_steps);
  if (config.count_steps > 0) {
    step->time_phases(nullptr);  // unmarked, as the Python row counts its steps
    result.op_counts = count_step_work(config.device, *step, config.count_steps, gpu_side_unavailable);
  }
}

}  // namespace

void fill_statistics(const RunConfig& config, RunResult& result) {
  if (result.steps.empty()) return;
  std::vector<double> ms;
  for (const auto& s : result.steps) ms.push_back(s.ms);
  result.step_ms = summarize(ms);
  const double tokens_per_step = static_cast<double>(result.world_size * result.batch_size * config.seq_len);
  result.tokens_per_s = tokens_per_step / (result.step_ms->median / 1000.0);
  // Per GPU: the global tokens/s shared among the ranks, each against its own device's peak.
  result.mfu = compute_mfu(config.device.is_cuda(), device_name(config.device), config.precision(),
                           config.model.flops_per_token(config.seq_len),
                           result.tokens_per_s / static_cast<double>(result.world_size),
                           config.model.hardware_flops_per_token(config.seq_len), result.fp8_flops_per_token);
}

namespace {

void fail(RunResult& result, const std::string& stop_reason, const std::string& reason) {
  result.status = "failed";
  result.stop_reason = stop_reason;
  result.reason = reason;
}

}  // namespace

std::vector<double> losses(const RunResult& result) {
  std::vector<double> out;
  for (const auto& s : result.steps) out.push_back(s.loss);
  return out;
}

RunResult run_configuration(RunConfig config, std::shared_ptr<const Tokens> tokens, const RunHooks& hooks) {
  RunResult result;
  result.batch_size = config.batch_size;
  Tf32Guard tf32(config.tf32);
  try {
    use_device(config.device);
    // A CPU that runs out of memory does not throw in time: the allocation fails deep inside a step, or the kernel's
    // OOM killer ends the process and every result after this one. A step that cannot fit fails here, with the
    // figures, as an out-of-memory on a GPU fails its configuration.
    if (!config.device.is_cuda())
      if (const auto available = available_host_bytes(); available && estimated_step_bytes(config) > *available)
        throw std::runtime_error("out of memory: batch " + std::to_string(config.batch_size) + " x " +
                                 std::to_string(config.seq_len) + " needs about " +
                                 format_bytes(estimated_step_bytes(config)) +
                                 " (estimated: weights, gradients and "
                                 "AdamW state, activations, loader buffers); " +
                                 format_bytes(static_cast<double>(*available)) + " of host memory are available");
    if (config.max_batch) {
      const auto memory = device_memory_bytes(config.device);  // before the probe holds any of it
      result.probe = probe_max_batch(config);
      if (memory)
        result.probe->estimate =
            estimate_max_batch(config, result.probe->base, result.probe->limit, static_cast<double>(*memory));
      // Every rank must run the same batch: the smallest any of them fits.
      if (hooks.collectives) result.probe->chosen = hooks.collectives->min(result.probe->chosen);
      config.batch_size = result.probe->chosen;
      result.batch_size = config.batch_size;
    }
    while (true) {
      try {
        measure(config, tokens, hooks, result);
        break;
      } catch (const std::exception& e) {
        // The probe's batch can still run out of memory in the measured run (longer warm-up, fragmentation): a
        // single process steps down to the next smaller batch that fit. Ranks cannot, the others being inside a
        // collective, so they fail as before.
        if (!result.probe || hooks.collectives || !is_out_of_memory(e)) throw;
        const auto smaller = smaller_fit(*result.probe, config.batch_size);
        if (!smaller) throw;
        result.probe->tried.push_back({config.batch_size, false, "measured run: " + short_message(e)});
        release_cached_memory(config.device);
        config.batch_size = result.probe->chosen = *smaller;
        result.batch_size = config.batch_size;
        result.warmup.clear();
        result.steps.clear();
        result.phases.clear();
      }
    }
  } catch (const Interrupted& e) {
    fail(result, "interrupted", e.what());
  } catch (const NonFiniteLoss& e) {
    fail(result, "failed", e.what());
  } catch (const std::exception& e) {
    const auto what = short_message(e);
    fail(result, "failed",
         !is_out_of_memory(e) || what.rfind("out of memory", 0) == 0
             ? what
             : "out of memory at batch " + std::to_string(config.batch_size) + ": " + what);
  }
  try {
    release_cached_memory(config.device);
  } catch (const std::exception& e) {
    if (result.status == "ok") fail(result, "failed", "releasing cached device memory: " + short_message(e));
  }
  fill_statistics(config, result);
  return result;
}

}  // namespace stepwise::bench
