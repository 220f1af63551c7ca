// StepTimer: steady-clock and CUDA-event implementations, each keeping its closed chunks until they are read.
#include "bench/measure/step_timer.h"

#include <ATen/ATen.h>

#ifdef STEPWISE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#endif

#include <chrono>
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

std::vector<double> as_doubles(const at::Tensor& host) {
  auto d = host.to(at::kDouble);
  return {d.data_ptr<double>(), d.data_ptr<double>() + d.numel()};
}

class SteadyClockTimer final : public StepTimer {
 public:
  void start() override { begin_ = std::chrono::steady_clock::now(); }
  void stop() override {
    const std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - begin_;
    open_.push_back(ms.count());
  }
  void close_chunk(const std::vector<at::Tensor>& losses,
                   const std::function<at::Tensor(at::Tensor)>& reduce) override {
    if (losses.size() != open_.size()) throw std::logic_error("close_chunk: one loss per timed step");
    closed_.push_back(
        {std::exchange(open_, {}), losses.empty() ? at::Tensor() : losses_to_host(losses, reduce, false)});
  }
  ChunkReading read_oldest() override {
    auto [ms, losses] = std::move(closed_.front());
    closed_.pop_front();
    return {std::move(ms), losses.defined() ? as_doubles(losses) : std::vector<double>{}};
  }
  size_t closed_chunks() const override { return closed_.size(); }
  std::string clock() const override { return "steady_clock"; }

 private:
  std::chrono::steady_clock::time_point begin_;
  std::vector<double> open_;
  std::deque<std::pair<std::vector<double>, at::Tensor>> closed_;
};

#ifdef STEPWISE_WITH_CUDA
class CudaEventTimer final : public StepTimer {
 public:
  explicit CudaEventTimer(c10::DeviceIndex index) : index_(index) {}
  // Events are recorded on the current (compute) stream; at::cuda::CUDAEvent defaults to no timing.
  void start() override {
    open_.emplace_back(at::cuda::CUDAEvent(cudaEventDefault), at::cuda::CUDAEvent(cudaEventDefault));
    open_.back().first.record(at::cuda::getCurrentCUDAStream(index_));
  }
  void stop() override { open_.back().second.record(at::cuda::getCurrentCUDAStream(index_)); }
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
    for (auto& [begin, end] : chunk.events) reading.ms.push_back(begin.elapsed_time(end));
    if (chunk.losses.defined()) reading.losses = as_doubles(chunk.losses);
    return reading;
  }
  size_t closed_chunks() const override { return closed_.size(); }
  std::string clock() const override { return "cuda_event"; }

 private:
  struct Chunk {
    std::vector<std::pair<at::cuda::CUDAEvent, at::cuda::CUDAEvent>> events;
    at::Tensor losses;  // pinned host memory, written by a non_blocking copy
    at::cuda::CUDAEvent copied;
  };
  c10::DeviceIndex index_;
  std::vector<std::pair<at::cuda::CUDAEvent, at::cuda::CUDAEvent>> open_;
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
