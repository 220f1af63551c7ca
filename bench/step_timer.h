// Per-step timing: a pair of CUDA events per step on the compute stream, or a steady clock on the CPU.
#pragma once

#include <c10/core/Device.h>

#include <memory>
#include <string>
#include <vector>

namespace stepwise::bench {

// start()/stop() only enqueue (CUDA) or read the clock (CPU): neither waits for the device. collect() waits
// for the last recorded event and returns the elapsed milliseconds of every step since the previous collect().
class StepTimer {
 public:
  virtual ~StepTimer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual std::vector<double> collect() = 0;
  // "cuda_event" or "steady_clock"
  virtual std::string clock() const = 0;
};

std::unique_ptr<StepTimer> make_step_timer(const c10::Device& device);

}  // namespace stepwise::bench
