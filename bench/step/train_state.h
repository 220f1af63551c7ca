// TrainState: the model, optimizer and loader of one configuration, built so every flag starts from the same
// function (the reference layout is initialised from the seed, then its weights are carried into the variant).
#pragma once

#include "bench/data/loader.h"
#include "bench/distributed/collectives.h"
#include "bench/distributed/grad_sync.h"
#include "bench/distributed/zero1.h"
#include "bench/lr_schedule.h"
#include "bench/optim/adamw.h"
#include "bench/optim/optimizer.h"
#include "bench/phases.h"
#include "bench/run_config.h"
#include "model/gpt.h"

#include <memory>

namespace stepwise::bench {

struct TrainState {
  model::GPT model{nullptr};
  std::unique_ptr<Optimizer> optimizer;  // AdamW, zero1's sharded AdamW, or with muon Muon (make_optimizer)
  std::unique_ptr<Loader> loader;        // null for the max-batch probe, which feeds random tokens
  c10::Device device = c10::kCPU;
  bool bf16_autocast = false;               // bf16 in autocast mode: forward and loss run under bf16 autocast
  std::unique_ptr<GradientSync> grad_sync;  // data parallel only: averages gradients between backward and step
  LrSchedule lr_schedule;                   // the rate of each optimizer step (constant unless asked for)
  double base_lr = 0;
  int64_t optimizer_steps = 0;   // optimizer steps taken, which the schedule reads
  PhaseMarks* phases = nullptr;  // where the step marks its phases' ends (time_phases); null: nobody times them

  // With zero1, the optimizer, sharded: it exchanges the gradients itself (there is no grad_sync). Else null.
  const Zero1AdamW* zero1() const { return dynamic_cast<const Zero1AdamW*>(optimizer.get()); }
};

// The configuration's model as every implementation starts it: the global generator seeded, the reference layout
// initialised, its weights carried into the configured layout; float32 on the CPU.
model::GPT initial_model(const RunConfig& config);
// initial_model, then dropout's seed, the device, bf16 when pure, and training mode.
model::GPT build_model(const RunConfig& config);

// The seed dropout draws from once the weights are built: the run's seed + 1 on a single process and on rank 0, and
// one more per rank, so data-parallel ranks drop different units (nanoGPT offsets its seed by rank the same way).
uint64_t dropout_seed(uint64_t seed, int rank = 0);

// The step's phases marked on `marks` from now on: by the step itself, and by zero1's optimizer around its collectives.
void time_phases(TrainState& state, PhaseMarks* marks);

// One optimizer step at the schedule's rate for this step (no host work beyond setting a double when constant).
void optimizer_step(TrainState& state);

// The configuration's optimizer over the model's parameters, unsharded: with muon, Muon (bench/optim/muon.h) over the
// blocks' matrices and the configured AdamW over the rest; else that AdamW over all of them.
std::unique_ptr<Optimizer> make_optimizer(const RunConfig& config, const model::GPT& model);

// build_model plus the optimizer and (when tokens are given) the loader. With `collectives` (data parallel) every
// rank starts from rank 0's weights, reads its own shard of the data, and averages gradients each step: through
// GradientSync's all-reduce, or with config.zero1 inside the sharded optimizer's step (Zero1AdamW). zero1 with muon
// under data parallel is refused (std::invalid_argument): a planned skip, bench/optim/muon.h says why.
TrainState make_train_state(const RunConfig& config, std::shared_ptr<const Tokens> tokens,
                            std::shared_ptr<Collectives> collectives = nullptr);

}  // namespace stepwise::bench
