// Per-step timing and the read-back of what the measured steps leave on the device: a pair of CUDA events per step
// on the compute stream (a steady clock on the CPU), and each chunk's losses copied to the host behind its last step.
#pragma once

#include "model/enum_names.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace stepwise::bench {

// How the host reads a chunk of steps back. Reading waits for the chunk's last step; if nothing is queued behind it,
// the GPU then idles until the host launches the next step, and that step's time includes the launch latency.
enum class HostSync {
  Lagged,  // read chunk k while chunk k+1 is already queued: the GPU never waits for the host (the default)
  Chunk,   // read chunk k before queuing chunk k+1 (every chunk starts on an idle GPU; kept to measure the difference)
};
inline constexpr auto kHostSyncNames =
    model::enum_names<HostSync>("host sync", {{HostSync::Lagged, "lagged"}, {HostSync::Chunk, "chunk"}});
std::string to_string(HostSync s);

// The steps of one chunk, read back: milliseconds and losses, in order.
struct ChunkReading {
  std::vector<double> ms, losses;
};

// start()/stop() only enqueue (CUDA) or read the clock (CPU): neither waits for the device. close_chunk() ends the
// chunk of steps timed since the previous one and queues its losses' copy to the host behind its last step;
// read_oldest() waits for the oldest closed chunk and returns it.
class StepTimer {
 public:
  virtual ~StepTimer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  // `losses`: one 0-dim device tensor per step since the last close. `reduce` (data parallel: the mean over ranks) is
  // applied to their stack on the device before the copy.
  virtual void close_chunk(const std::vector<at::Tensor>& losses,
                           const std::function<at::Tensor(at::Tensor)>& reduce = nullptr) = 0;
  virtual ChunkReading read_oldest() = 0;
  virtual size_t closed_chunks() const = 0;
  // "cuda_event" or "steady_clock"
  virtual std::string clock() const = 0;
};

std::unique_ptr<StepTimer> make_step_timer(const c10::Device& device);

}  // namespace stepwise::bench
