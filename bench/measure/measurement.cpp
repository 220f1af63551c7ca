// Warm-up, chunks of timed steps and the stop rule between them, as the result records them.
#include "bench/measure/measurement.h"

#include "bench/device.h"
#include "bench/interrupted.h"
#include "bench/memory.h"

#include <cmath>
#include <utility>

namespace stepwise::bench {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Appends a chunk read back from the device; a non-finite loss ends the configuration.
void append(std::vector<StepRecord>& out, const ChunkReading& chunk, const char* phase) {
  for (size_t i = 0; i < chunk.ms.size(); ++i) {
    out.push_back({chunk.ms[i], chunk.losses.at(i)});
    if (i < chunk.cpu_ms.size()) out.back().cpu_ms = chunk.cpu_ms[i];
    if (!std::isfinite(out.back().loss))
      throw NonFiniteLoss("loss is " + std::to_string(out.back().loss) + " at " + phase + " step " +
                          std::to_string(out.size() - 1));
  }
}

}  // namespace

Measurement::Measurement(const RunConfig& config, Step& step, Ranks& ranks, const RunHooks& hooks, RunResult& result)
    : config_(config),
      step_(step),
      ranks_(ranks),
      hooks_(hooks),
      result_(result),
      timing_(config.timing),
      timer_(make_step_timer(config.device)),
      gpu_(config.device) {
  result_.clock = timer_->clock();
  result_.phase_note = step_.phase_note();
  step_.time_phases(timer_.get());
  timing_.warmup = step_.warmup_steps(timing_.warmup);  // a captured step captures inside the warm-up
  progress_.config = &config_;
}

Measurement::~Measurement() { step_.time_phases(nullptr); }

bool Measurement::interrupted() const { return hooks_.interrupted && hooks_.interrupted->load(); }

// The GPU's clocks and throttling at each phase's edges, read between phases, never inside a timed step.
void Measurement::mark(const char* phase, bool start) {
  gpu_.mark(phase, start);
  result_.gpu_state = gpu_.to_json();
}

void Measurement::warm_up() {
  mark("warmup", true);
  progress_.warmup = true;
  const int64_t required = step_.warmup_steps(1);
  const auto began = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < timing_.warmup; ++i) {
    if (i >= required && ranks_.alone() && seconds_since(began) >= timing_.stop.max_time_s) break;
    timer_->start();
    losses_.push_back(step_());
    timer_->stop();
    if (interrupted()) throw Interrupted("interrupted during warm-up");
  }
  timer_->close_chunk(std::exchange(losses_, {}), ranks_.loss_reduction());
  append(result_.warmup, timer_->read_oldest(), "warm-up");
  mark("warmup", false);
  if (hooks_.on_progress) hooks_.on_progress(progress_);
}

size_t Measurement::run_chunk(std::chrono::steady_clock::time_point began, size_t queued) {
  size_t ran = 0;
  for (; ran < timing_.check_every && queued + ran < timing_.stop.max_steps; ++ran) {
    // --max-time is a hard cap: a slow step never overshoots it by a whole chunk. (Ranks stop together, per chunk.)
    if (queued + ran > 0 && ranks_.alone() && seconds_since(began) >= timing_.stop.max_time_s) break;
    // ---------------- TIMED REGION BEGIN ----------------
    timer_->start();
    at::Tensor loss = step_();
    timer_->stop();
    // ---------------- TIMED REGION END ------------------
    losses_.push_back(loss);
    if (interrupted() && ranks_.alone()) return ran + 1;  // ranks stop together, at the chunk boundary
  }
  return ran;
}

std::optional<StopReason> Measurement::stop_rule(std::chrono::steady_clock::time_point began) {
  const Summary s = summarize(times_);
  progress_.step = times_.size();
  const double tokens_per_step = static_cast<double>(config_.batch_size * config_.seq_len);
  progress_.tokens_per_s = tokens_per_step / (s.median / 1000.0);
  progress_.noise = std::isfinite(s.noise) ? std::optional(s.noise) : std::nullopt;
  if (hooks_.on_progress) hooks_.on_progress(progress_);
  const auto stop = should_stop(timing_.stop, times_.size(), s.noise, seconds_since(began));
  const bool stop_now = ranks_.any(interrupted() || stop);  // every rank runs the same steps
  if (ranks_.any(interrupted()))
    throw Interrupted("interrupted after " + std::to_string(times_.size()) + " measured steps");
  if (!stop_now) return std::nullopt;
  return stop.value_or(StopReason::Noise);  // another rank's reason: this one stops with it
}

void Measurement::absorb(const ChunkReading& chunk) {
  append(result_.steps, chunk, "measured");
  result_.phases.insert(result_.phases.end(), chunk.phases.begin(), chunk.phases.end());
  times_.insert(times_.end(), chunk.ms.begin(), chunk.ms.end());
}

void Measurement::measure_steps() {
  synchronize(config_.device);
  windowed_ = step_.opens_memory_window() || reset_peak_memory(config_.device);
  progress_.warmup = false;
  mark("measured", true);
  const auto began = std::chrono::steady_clock::now();
  // Chunks queued but not yet read: lagged reading keeps one in flight so the GPU always has a step queued.
  const size_t in_flight = timing_.host_sync == HostSync::Lagged ? 1 : 0;
  size_t queued = 0;
  while (true) {
    queued += run_chunk(began, queued);
    timer_->close_chunk(std::exchange(losses_, {}), ranks_.loss_reduction());
    // Reading a chunk waits for its last step: the only host syncs of the measured phase. Lagged, that chunk ran
    // while this one was queued, so the wait is short and the GPU keeps working.
    while (timer_->closed_chunks() > in_flight) absorb(timer_->read_oldest());
    if (times_.empty()) {  // lagged: the first chunk is still running
      if (interrupted() && ranks_.alone()) throw Interrupted("interrupted before a measured step was read");
      continue;
    }
    if (const auto stop = stop_rule(began)) {
      while (timer_->closed_chunks() > 0) absorb(timer_->read_oldest());  // what is queued was measured too
      result_.stop_reason = to_string(*stop);
      break;
    }
  }
  mark("measured", false);
}

}  // namespace stepwise::bench
