// StepTimer implementations.
#include "bench/step_timer.h"

#ifdef STEPWISE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#endif

#include <chrono>
#include <stdexcept>
#include <utility>

namespace stepwise::bench {

namespace {

class SteadyClockTimer final : public StepTimer {
 public:
  void start() override { begin_ = std::chrono::steady_clock::now(); }
  void stop() override {
    const std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - begin_;
    pending_.push_back(ms.count());
  }
  std::vector<double> collect() override { return std::exchange(pending_, {}); }
  std::string clock() const override { return "steady_clock"; }

 private:
  std::chrono::steady_clock::time_point begin_;
  std::vector<double> pending_;
};

#ifdef STEPWISE_WITH_CUDA
class CudaEventTimer final : public StepTimer {
 public:
  explicit CudaEventTimer(c10::DeviceIndex index) : index_(index) {}
  // Events are recorded on the current (compute) stream; at::cuda::CUDAEvent defaults to no timing.
  void start() override {
    pairs_.emplace_back(at::cuda::CUDAEvent(cudaEventDefault), at::cuda::CUDAEvent(cudaEventDefault));
    pairs_.back().first.record(at::cuda::getCurrentCUDAStream(index_));
  }
  void stop() override { pairs_.back().second.record(at::cuda::getCurrentCUDAStream(index_)); }
  std::vector<double> collect() override {
    std::vector<double> ms;
    if (pairs_.empty()) return ms;
    pairs_.back().second.synchronize();
    for (auto& [begin, end] : pairs_) ms.push_back(begin.elapsed_time(end));
    pairs_.clear();
    return ms;
  }
  std::string clock() const override { return "cuda_event"; }

 private:
  c10::DeviceIndex index_;
  std::vector<std::pair<at::cuda::CUDAEvent, at::cuda::CUDAEvent>> pairs_;
};
#endif

}  // namespace

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
