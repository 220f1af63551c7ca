// The measurement protocol around the step: optional batch probe, warm-up, chunks of timed steps until the noise
// target or a cap, the statistics, memory and MFU; a failure is recorded in the result, never thrown.
#include "bench/measure/runner.h"

#include "bench/device.h"
#include "bench/measure/gpu_state.h"
#include "bench/measure/step_timer.h"
#include "bench/oom.h"
#include "bench/step/tf32.h"
#include "bench/step/train_step.h"
#include "bench/trace/trace_pass.h"
#include "model/sdpa.h"

#include <ATen/ATen.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace stepwise::bench {

namespace {

struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct NonFiniteLoss : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool interrupted(const RunHooks& hooks) { return hooks.interrupted && hooks.interrupted->load(); }

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

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Data parallel: the loss of the global batch, the mean over ranks, so every rank sees (and judges) the same value.
std::function<at::Tensor(at::Tensor)> mean_over_ranks(const RunHooks& hooks) {
  if (!hooks.collectives) return nullptr;
  return [collectives = hooks.collectives](at::Tensor stacked) {
    Collectives::wait(collectives->all_reduce_sum_async(stacked));
    return stacked.div_(collectives->world_size());
  };
}

// Appends a chunk read back from the device; a non-finite loss ends the configuration.
void append(std::vector<StepRecord>& out, const ChunkReading& chunk, const char* phase) {
  for (size_t i = 0; i < chunk.ms.size(); ++i) {
    out.push_back({chunk.ms[i], chunk.losses.at(i)});
    if (!std::isfinite(out.back().loss))
      throw NonFiniteLoss("loss is " + std::to_string(out.back().loss) + " at " + phase + " step " +
                          std::to_string(out.size() - 1));
  }
}

// Data parallel: a step's time is its slowest rank's (the all-reduce couples them); keep each rank's median.
void record_ranks(Collectives& collectives, const TrainState& state, const Step& step, const RunConfig& config,
                  const std::vector<double>& times, RunResult& result) {
  const auto per_rank = collectives.all_gather(times);
  std::vector<double> medians;
  for (const auto& t : per_rank) medians.push_back(summarize(t).median);
  for (size_t i = 0; i < result.steps.size(); ++i)
    for (const auto& t : per_rank) result.steps[i].ms = std::max(result.steps[i].ms, t.at(i));
  const auto slowest = std::max_element(medians.begin(), medians.end()) - medians.begin();
  result.world_size = collectives.world_size();
  result.distributed = {{"world_size", collectives.world_size()},
                        {"backend", collectives.backend()},
                        {"rank_step_ms_median", medians},
                        {"slowest_rank", slowest},
                        {"tokens_per_step_per_rank", config.batch_size * config.seq_len},
                        {"allreduce", step.allreduce()}};
  auto& d = result.distributed;
  if (const auto* zero1 = state.zero1()) {
    // No buckets: the sharded optimizer reduce-scatters the whole flat gradient in its step. compile's step describes
    // only its captured bucketed all-reduce (compile.h), so the exchange is the optimizer's own account.
    d["allreduce"] = zero1->exchange();
    d["optimizer"] = "zero1";
    d["reduce_scatter"] = zero1->reduce_scatter_method();
    d["optimizer_state_bytes_per_rank"] = zero1->state_bytes();
    d["optimizer_state_bytes_replicated"] = zero1->replicated_state_bytes();
    d["zero1_buffer_bytes"] = zero1->buffer_bytes();
  } else {
    d["bucket_bytes"] = state.grad_sync->bucket_bytes();
    d["bucket_count"] = state.grad_sync->bucket_count();
  }
}

// split_peak counts the whole AdamW state on every rank; zero1 holds its shard's moments and, besides them, its flat
// buffer and shards, which the activations (the peak's remainder) must not absorb.
void account_zero1(const Zero1AdamW& zero1, MemoryStats& m) {
  const int64_t replicated = m.optimizer_state_bytes.value_or(0);
  m.optimizer_state_bytes = zero1.state_bytes();
  if (m.activation_bytes)
    m.activation_bytes =
        std::max<int64_t>(0, *m.activation_bytes + replicated - zero1.state_bytes() - zero1.buffer_bytes());
}

void measure(const RunConfig& config, const std::shared_ptr<const Tokens>& tokens, const RunHooks& hooks,
             RunResult& result) {
  TrainState state = make_train_state(config, tokens, hooks.collectives);
  // The AdamW implementation that ran; zero1's sharding of it is the flag's, and the distributed section's.
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
  const std::unique_ptr<Step> step = make_step(state, config);
  auto timer = make_step_timer(config.device);
  result.clock = timer->clock();
  const auto reduce = mean_over_ranks(hooks);
  auto timing = config.timing;
  timing.warmup = step->warmup_steps(timing.warmup);  // a captured step captures inside the warm-up
  std::vector<at::Tensor> losses;
  Progress progress;
  progress.config = &config;
  // The GPU's clocks and throttling at each phase's edges, read between phases, never inside a timed step.
  GpuState gpu(config.device);
  const auto mark = [&](const char* phase, bool start) {
    gpu.mark(phase, start);
    result.gpu_state = gpu.to_json();
  };
  mark("warmup", true);

  // Warm-up: allocator growth, cuBLAS/cuDNN heuristics, first-touch paging. Recorded, never summarised. Bounded by
  // --max-time like the measured phase, though never below one step (and compile's capture).
  progress.warmup = true;
  const int64_t required_warmup = step->warmup_steps(1);
  const auto warmup_began = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < timing.warmup; ++i) {
    if (i >= required_warmup && !hooks.collectives && seconds_since(warmup_began) >= timing.stop.max_time_s) break;
    timer->start();
    losses.push_back((*step)());
    timer->stop();
    if (interrupted(hooks)) throw Interrupted("interrupted during warm-up");
  }
  timer->close_chunk(std::exchange(losses, {}), reduce);
  append(result.warmup, timer->read_oldest(), "warm-up");
  mark("warmup", false);
  if (hooks.on_progress) hooks.on_progress(progress);

  synchronize(config.device);
  const bool windowed = step->opens_memory_window() || reset_peak_memory(config.device);
  progress.warmup = false;
  mark("measured", true);
  const auto began = std::chrono::steady_clock::now();
  const double tokens_per_step = static_cast<double>(config.batch_size * config.seq_len);
  // Chunks queued but not yet read: lagged reading keeps one in flight so the GPU always has a step queued.
  const size_t in_flight = timing.host_sync == HostSync::Lagged ? 1 : 0;
  std::vector<double> times;  // read back so far
  size_t queued = 0;
  auto absorb = [&](const ChunkReading& chunk) {
    append(result.steps, chunk, "measured");
    times.insert(times.end(), chunk.ms.begin(), chunk.ms.end());
  };
  while (true) {
    for (size_t i = 0; i < timing.check_every && queued < timing.stop.max_steps; ++i) {
      if (hooks.fail_before_step == queued) throw std::runtime_error("injected failure (STEPWISE_TEST_FAIL_RANK)");
      // --max-time is a hard cap: a slow step never overshoots it by a whole chunk. (Ranks stop together, per chunk.)
      if (queued > 0 && !hooks.collectives && seconds_since(began) >= timing.stop.max_time_s) break;
      // ---------------- TIMED REGION BEGIN ----------------
      timer->start();
      at::Tensor loss = (*step)();
      timer->stop();
      // ---------------- TIMED REGION END ------------------
      losses.push_back(loss);
      ++queued;
      if (interrupted(hooks) && !hooks.collectives) break;  // ranks stop together, at the chunk boundary
    }
    timer->close_chunk(std::exchange(losses, {}), reduce);
    // Reading a chunk waits for its last step: the only host syncs of the measured phase. Lagged, that chunk ran
    // while this one was queued, so the wait is short and the GPU keeps working.
    while (timer->closed_chunks() > in_flight) absorb(timer->read_oldest());
    if (times.empty()) {  // lagged: the first chunk is still running
      if (interrupted(hooks) && !hooks.collectives) throw Interrupted("interrupted before a measured step was read");
      continue;
    }

    const Summary s = summarize(times);
    progress.step = times.size();
    progress.tokens_per_s = tokens_per_step / (s.median / 1000.0);
    progress.noise = std::isfinite(s.noise) ? std::optional(s.noise) : std::nullopt;
    if (hooks.on_progress) hooks.on_progress(progress);
    auto stop = should_stop(timing.stop, times.size(), s.noise, seconds_since(began));
    bool stop_now = interrupted(hooks) || stop;
    if (hooks.collectives) stop_now = hooks.collectives->any(stop_now);  // every rank runs the same steps
    const bool interrupt_now = hooks.collectives ? hooks.collectives->any(interrupted(hooks)) : interrupted(hooks);
    if (interrupt_now) throw Interrupted("interrupted after " + std::to_string(times.size()) + " measured steps");
    if (stop_now) {
      while (timer->closed_chunks() > 0) absorb(timer->read_oldest());  // what is queued was measured too
      result.stop_reason = to_string(stop.value_or(StopReason::Noise));
      break;
    }
  }
  mark("measured", false);
  if (hooks.collectives) record_ranks(*hooks.collectives, state, *step, config, times, result);
  step->measure_activations();  // every rank: its backward may all-reduce
  result.memory = read_memory(config.device);
  split_peak(*result.memory, state.model->parameters(), config, config.batch_size);
  if (const auto* zero1 = state.zero1()) account_zero1(*zero1, *result.memory);
  result.memory->scope = windowed ? step->memory_scope()
                                  : "the whole process: /proc/self/clear_refs refused the reset, so the peak covers "
                                    "everything since start-up";
  if (config.trace_steps > 0) result.trace = trace_steps(config.device, *step, config.trace_steps);
}

}  // namespace

void summarise(const RunConfig& config, RunResult& result) {
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
  summarise(config, result);
  return result;
}

}  // namespace stepwise::bench
