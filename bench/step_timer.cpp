// StepTimer: steady-clock and CUDA-event implementations, each keeping its closed chunks until they are read.
#include "bench/step_timer.h"

#include <ATen/ATen.h>

#ifdef STEPWISE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#endif

#include <chrono>
#include <cmath>
#include <ctime>
#include <stdexcept>
#include <utility>

namespace stepwise::bench {

namespace {

// A chunk's losses: stacked on the device (and reduced), then copied into host memory. Reading it back never
// involves a blocking device-to-host copy, which would also wait for every step queued after this chunk.
at::Tensor losses_to_host(const std::vector<at::Tensor>& losses, const std::function<at::Tensor(at::Tensor)>& reduce,
                          bool pinned) {
  auto stacked = at::stack(losses).to(at::kFloat);  // (steps,) on the device
  if (reduce) stacked = reduce(stacked);
  auto host = at::empty(stacked.sizes(), at::TensorOptions().dtype(at::kFloat).pinned_memory(pinned));
  host.copy_(stacked, /*non_blocking=*/pinned);
  return host;
}

// A phase marked twice in one step (zero1's comm) accumulates.
void add(PhaseTimes& step, Phase phase, double ms) {
  auto& slot = step[static_cast<size_t>(phase)];
  slot = std::isnan(slot) ? ms : slot + ms;
}

std::vector<double> as_doubles(const at::Tensor& host) {
  auto d = host.to(at::kDouble);
  return {d.data_ptr<double>(), d.data_ptr<double>() + d.numel()};
}

// CPU time of every thread of this process, in ms: the intra-op threads' and the step's own.
double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

class SteadyClockTimer final : public StepTimer {
 public:
  void start() override {
    cpu_begin_ = process_cpu_ms();
    begin_ = last_ = std::chrono::steady_clock::now();
    phases_.push_back(no_phase_times());
    timing_ = true;
  }
  // CPU work is synchronous, so the clock between two marks is the phase's own time.
  void mark(Phase ended) override {
    if (!timing_) return;
    const auto now = std::chrono::steady_clock::now();
    add(phases_.back(), ended, std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }
  void stop() override {
    const std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - begin_;
    open_.push_back(ms.count());
    open_cpu_.push_back(process_cpu_ms() - cpu_begin_);
    timing_ = false;
  }
  void close_chunk(const std::vector<at::Tensor>& losses,
                   const std::function<at::Tensor(at::Tensor)>& reduce) override {
    if (losses.size() != open_.size()) throw std::logic_error("close_chunk: one loss per timed step");
    closed_.push_back({std::exchange(open_, {}), losses.empty() ? at::Tensor() : losses_to_host(losses, reduce, false),
                       std::exchange(phases_, {}), std::exchange(open_cpu_, {})});
  }
  ChunkReading read_oldest() override {
    Chunk chunk = std::move(closed_.front());
    closed_.pop_front();
    return {std::move(chunk.ms), chunk.losses.defined() ? as_doubles(chunk.losses) : std::vector<double>{},
            std::move(chunk.cpu_ms), std::move(chunk.phases)};
  }
  size_t closed_chunks() const override { return closed_.size(); }
  std::string clock() const override { return "steady_clock"; }

 private:
  struct Chunk {
    std::vector<double> ms;
    at::Tensor losses;
    std::vector<PhaseTimes> phases;
    std::vector<double> cpu_ms;
  };
  std::chrono::steady_clock::time_point begin_, last_;
  double cpu_begin_ = 0;
  bool timing_ = false;
  std::vector<double> open_, open_cpu_;
  std::vector<PhaseTimes> phases_;  // the open chunk's, one per step
  std::deque<Chunk> closed_;
};

#ifdef STEPWISE_WITH_CUDA
class CudaEventTimer final : public StepTimer {
 public:
  explicit CudaEventTimer(c10::DeviceIndex index) : index_(index) {}
  // Events are recorded on the current (compute) stream; at::cuda::CUDAEvent defaults to no timing.
  void start() override {
    open_.push_back({timing_event(), timing_event(), {}});
    open_.back().begin.record(at::cuda::getCurrentCUDAStream(index_));
    timing_ = true;
  }
  // One more event on the compute stream, read back with the step's own: the phase is the interval the stream spent
  // since the previous event, which is the device's time in it once the host runs ahead of the device.
  void mark(Phase ended) override {
    if (!timing_) return;
    auto& marks = open_.back().marks;
    marks.emplace_back(ended, timing_event());
    marks.back().second.record(at::cuda::getCurrentCUDAStream(index_));
  }
  void stop() override {
    open_.back().end.record(at::cuda::getCurrentCUDAStream(index_));
    timing_ = false;
  }
  void close_chunk(const std::vector<at::Tensor>& losses,
                   const std::function<at::Tensor(at::Tensor)>& reduce) override {
    if (losses.size() != open_.size()) throw std::logic_error("close_chunk: one loss per timed step");
    Chunk chunk{std::exchange(open_, {}), {}, at::cuda::CUDAEvent()};
    if (!losses.empty()) chunk.losses = losses_to_host(losses, reduce, /*pinned=*/true);
    chunk.copied.record(at::cuda::getCurrentCUDAStream(index_));  // behind the copy, which is behind the steps
    closed_.push_back(std::move(chunk));
  }
  ChunkReading read_oldest() override {
    Chunk chunk = std::move(closed_.front());
    closed_.pop_front();
    chunk.copied.synchronize();  // the chunk's steps and its loss copy; never the chunks queued after it
    ChunkReading reading;
    for (auto& step : chunk.steps) {
      reading.ms.push_back(step.begin.elapsed_time(step.end));
      PhaseTimes phases = no_phase_times();
      at::cuda::CUDAEvent* previous = &step.begin;
      for (auto& [phase, event] : step.marks) {
        add(phases, phase, previous->elapsed_time(event));
        previous = &event;
      }
      reading.phases.push_back(phases);
    }
    if (chunk.losses.defined()) reading.losses = as_doubles(chunk.losses);
    return reading;
  }
  size_t closed_chunks() const override { return closed_.size(); }
  std::string clock() const override { return "cuda_event"; }

 private:
  static at::cuda::CUDAEvent timing_event() { return at::cuda::CUDAEvent(cudaEventDefault); }
  struct TimedStep {
    at::cuda::CUDAEvent begin, end;
    std::vector<std::pair<Phase, at::cuda::CUDAEvent>> marks;
  };
  struct Chunk {
    std::vector<TimedStep> steps;
    at::Tensor losses;  // pinned host memory, written by a non_blocking copy
    at::cuda::CUDAEvent copied;
  };
  c10::DeviceIndex index_;
  bool timing_ = false;
  std::vector<TimedStep> open_;
  std::deque<Chunk> closed_;
};
#endif

}  // namespace

std::string to_string(HostSync s) { return kHostSyncNames.to_string(s); }

std::unique_ptr<StepTimer> make_step_timer(const c10::Device& device) {
  if (device.is_cuda()) {
#ifdef STEPWISE_WITH_CUDA
    return std::make_unique<CudaEventTimer>(device.index());
#else
    throw std::runtime_error("this build has no CUDA support");
#endif
  }
  return std::make_unique<SteadyClockTimer>();
}

}  // namespace stepwise::bench
