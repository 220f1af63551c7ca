// Per-step timing and the read-back of what the measured steps leave on the device: a pair of CUDA events per step
// on the compute stream (a steady clock on the CPU), an event (a clock read) at each phase mark between them, and each
// chunk's losses copied to the host behind its last step.
#pragma once

#include "bench/phases.h"
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

// The steps of one chunk, read back: milliseconds, losses and each step's phases, in order. On a CPU also each step's
// process CPU time (`cpu_ms`; empty on a GPU): a step on one thread that other work on the machine preempts takes
// longer on the clock but not in CPU time, which is what a gate on a shared machine compares (docs/ci.md).
struct ChunkReading {
  std::vector<double> ms, losses, cpu_ms;
  std::vector<PhaseTimes> phases;
};

// start()/stop() and the phase marks (PhaseMarks::mark, between them) only enqueue (CUDA) or read the clock (CPU):
// none waits for the device. A phase's time runs from the previous mark (or start()) to its own, on the same stream or
// clock as the step's, so the marked phases add up to the step up to stop(). close_chunk() ends the chunk of steps
// timed since the previous one and queues its losses' copy to the host behind its last step; read_oldest() waits for
// the oldest closed chunk and returns it.
class StepTimer : public PhaseMarks {
 public:
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
