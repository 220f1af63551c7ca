// The training step the runner times, as one interface with two kinds: the eager step, and compile's CUDA-graph
// replay (bench/step/compile.h). Each kind owns its mode — the warm-up it needs, the steps the batch probe must run,
// when its peak-memory window opens, how its all-reduce runs — so the runner and the probe never ask which one they
// hold.
#pragma once

#include "bench/step/train_state.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace stepwise::bench {

class Step {
 public:
  virtual ~Step() = default;
  // One step: batch -> copy -> forward -> loss -> backward -> optimizer step -> zero grads. Returns the detached loss,
  // still on the device: nothing inside waits for the device, and reading the loss is left to the caller.
  virtual at::Tensor operator()() = 0;
  // From now on, mark the end of each phase of a step on `marks` (bench/phases.h): the measurement's step
  // timer, which keeps the marks made between its start() and stop().
  virtual void time_phases(PhaseMarks* marks) = 0;
  // What the phase split leaves out or merges for this kind of step (null: nothing).
  virtual std::optional<std::string> phase_note() const { return std::nullopt; }
  // The warm-up steps to run when `requested` were asked for (--warmup; 1 gives the fewest this kind needs).
  virtual int64_t warmup_steps(int64_t requested) const { return requested; }
  // The steps the max_batch probe runs to reach this step's steady-state footprint.
  virtual int probe_steps() const = 0;
  // Whether the step opened the peak-memory window itself (before a capture), so the runner must not reset it.
  virtual bool opens_memory_window() const { return false; }
  // After the measured steps, off the clock: one forward and backward with the activation window open around them
  // (bench/memory.h), so the activation memory leaves out AdamW's temporaries. A no-op for a captured step,
  // whose activations live in its graph's pool: its activation figure comes from the whole phase's peak, and its
  // result says so (memory.activation_basis "measured_peak", not comparable with the eager rows').
  virtual void measure_activations() {}
  // What the peak memory of the measured phase covers (summary.memory.scope).
  virtual std::string memory_scope() const = 0;
  // How the data-parallel gradient all-reduce runs inside this step (distributed.allreduce); with zero1, what the
  // sharded optimizer exchanges instead (Zero1AdamW::exchange).
  virtual std::string allreduce() const = 0;
};

// The configuration's step: compile's CudaGraphStep, else the eager step.
std::unique_ptr<Step> make_step(TrainState& state, const RunConfig& config);

// forward -> loss -> backward (and, data parallel, the gradient all-reduce) on a batch already on the device: the
// part compile's CUDA graph captures, as torch.compile(model) compiles the model and leaves the optimizer eager.
// With zero1 it holds no collective: the optimizer step's reduce-scatter and all-gather follow it, never captured.
// `marks` (null under capture) gets the ends of forward, backward and the all-reduce's wait. `autocast_cache` must be
// off under capture (cached casts would be baked into the graph).
at::Tensor forward_backward(TrainState& state, const at::Tensor& x, const at::Tensor& y, PhaseMarks* marks,
                            bool autocast_cache = true);

}  // namespace stepwise::bench
