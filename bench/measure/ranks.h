// How the ranks of a run agree while it is measured. One process decides alone: a time cap may end a phase between
// two steps and an interruption stops it at the next one. Data-parallel ranks (c10d) must run the same steps, since
// every step's all-reduce couples them: they decide together at each chunk's boundary, stop when any of them would,
// report the loss averaged over ranks, and record a step's time as the slowest rank's. The measurement
// (bench/measure/measurement.h) asks its Ranks and never which kind it holds, as the runner never asks which Step.
#pragma once

#include "bench/distributed/collectives.h"
#include "bench/memory.h"
#include "bench/step/train_state.h"
#include "bench/step/train_step.h"

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <vector>

namespace stepwise::bench {

struct RunResult;

class Ranks {
 public:
  virtual ~Ranks() = default;
  // Whether a time cap or an interruption may end a phase between two steps (one process), or only where every rank
  // decides at once (a chunk's boundary).
  virtual bool alone() const = 0;
  // True on every rank when `mine` is true on any of them.
  virtual bool any(bool mine) = 0;
  // What a chunk's stacked losses become before they are read: nothing (one process), or the mean over ranks.
  virtual std::function<at::Tensor(at::Tensor)> loss_reduction() const = 0;
  // After the measured steps (`times`: this rank's): the result's per-step times and its distributed section.
  virtual void record(const TrainState& state, const Step& step, const RunConfig& config,
                      const std::vector<double>& times, RunResult& result) = 0;
  // The memory split's share of the optimizer state, where ranks shard it (zero1).
  virtual void account(const TrainState& state, MemoryStats& memory) const = 0;
};

// One process without `collectives`, else this rank of a data-parallel run.
std::unique_ptr<Ranks> make_ranks(std::shared_ptr<Collectives> collectives);

}  // namespace stepwise::bench
