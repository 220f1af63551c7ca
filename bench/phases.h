// Where a step's time goes: the step marks the end of each of its phases (the batch, forward, backward, the gradient
// exchange under data parallel, the optimizer step) and the step timer (bench/step_timer.h) turns the marks
// into each phase's milliseconds with the step's own clock: CUDA events on the compute stream, read back with the
// step's events a chunk behind, or the steady clock on a CPU. A mark only enqueues an event or reads the clock, so
// the split adds no host synchronisation to the step; the step's time itself stays the pair of events around it.
#pragma once

#include "model/enum_names.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace stepwise::bench {

// In the order a step runs them, which is also the order they are reported and stacked in.
enum class Phase {
  Batch,            // the loader's next batch and its host-to-device copy (into the static inputs with compile)
  Forward,          // forward, head and loss
  Backward,         // backward (with data parallel, the all-reduces it launches overlap it)
  ForwardBackward,  // compile: forward and backward replay as one CUDA graph, which the host cannot mark inside
  Comm,             // data parallel: the exposed wait for the all-reduce, or zero1's reduce-scatter and all-gather
  Optimizer,        // the optimizer step at the schedule's rate, and zero grads
};
inline constexpr size_t kPhaseCount = 6;
inline constexpr auto kPhaseNames = model::enum_names<Phase>("phase", {{Phase::Batch, "batch"},
                                                                       {Phase::Forward, "forward"},
                                                                       {Phase::Backward, "backward"},
                                                                       {Phase::ForwardBackward, "forward_backward"},
                                                                       {Phase::Comm, "comm"},
                                                                       {Phase::Optimizer, "optimizer"}});
std::string to_string(Phase p);

// One step's milliseconds per phase, indexed by Phase; NaN for a phase the step never marked. A phase marked twice in
// a step (zero1's comm, before and after the shard's update) holds the sum.
using PhaseTimes = std::array<double, kPhaseCount>;
PhaseTimes no_phase_times();

class PhaseMarks {
 public:
  virtual ~PhaseMarks() = default;
  // The time since the step began, or since the previous mark, belongs to `ended`. Enqueues an event on the current
  // stream or reads the clock; never waits for the device. Outside a timed step (the activation pass, the probe) it
  // records nothing.
  virtual void mark(Phase ended) = 0;
};

// `marks->mark(ended)` where the step is timed by phases; nothing where `marks` is null (compile's capture, whose
// stream must not record a host-readable event, and every step nobody times).
inline void mark(PhaseMarks* marks, Phase ended) {
  if (marks) marks->mark(ended);
}

// The result's `phases` section (results/schema.json): per phase in Phase order, the median over the measured steps,
// its share of the step's median (`step_median_ms`, the whole step as the table reports it) and the raw per-step
// samples; the median of the per-step sums beside it. Null when no measured step carries a phase. `note` says what the
// split leaves out or merges (compile's one graph, data parallel's rank).
nlohmann::json phases_json(const std::vector<PhaseTimes>& steps, std::optional<double> step_median_ms,
                           const std::string& clock, const std::optional<std::string>& note);

}  // namespace stepwise::bench
