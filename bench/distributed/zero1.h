// ZeRO-1 (llm.c's -z 1): AdamW whose state is sharded across the data-parallel ranks. Each rank keeps the moments
// of only its 1/world_size of the parameters; the gradients are reduce-scattered into those shards and the updated
// shards all-gathered back, so the training step uses it as any other bench::AdamW (and needs no GradientSync).
#pragma once

#include "bench/distributed/collectives.h"
#include "bench/optim/adamw.h"
#include "bench/phases.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stepwise::bench {

class Zero1AdamW final : public AdamW {
 public:
  // `params` all of one dtype (fp32, or bf16 when pure) on one device, else std::runtime_error; in the same order on
  // every rank, which flattens them alike. The inner AdamW is make_adamw(kind) over this rank's shard.
  Zero1AdamW(AdamWKind kind, std::vector<at::Tensor> params, const AdamWOptions& options,
             std::shared_ptr<Collectives> collectives);

  // Every parameter's gradient flattened (a parameter without one counts as zeros, as DDP sends), reduce-scattered and
  // averaged into this rank's shard, AdamW on the shard, the shards all-gathered into every parameter. Collective:
  // every rank must call it.
  void step() override;
  void zero_grad() override;
  void set_lr(double lr) override { inner_->set_lr(lr); }
  // From now on, step() marks its gradients' reduce-scatter and its parameters' all-gather as the phase comm, and the
  // shard's update between them as optimizer (bench/phases.h). Null: no marks.
  void time_phases(PhaseMarks* marks) { marks_ = marks; }
  std::string name() const override { return "zero1(" + adamw() + ")"; }
  // The AdamW implementation each shard steps with ("fused", ...): what a result's config.optimizer records, beside
  // the zero1 flag.
  std::string adamw() const { return inner_->name(); }

  // This rank's AdamW state: the two moments of its shard (padding included), in bytes.
  int64_t state_bytes() const override;
  // What each rank would hold unsharded: the two moments of every parameter.
  int64_t replicated_state_bytes() const;
  // What sharding costs besides: the flat buffer of all parameters and this rank's parameter and gradient shards.
  int64_t buffer_bytes() const;
  // How the gradients reach the shards (Collectives::reduce_scatter_method).
  std::string reduce_scatter_method() const { return collectives_->reduce_scatter_method(); }
  // What the step exchanges instead of DDP's bucketed all-reduce (distributed.allreduce).
  std::string exchange() const;

 private:
  std::vector<at::Tensor> params_;
  std::shared_ptr<Collectives> collectives_;
  int64_t numel_ = 0;        // elements of all parameters
  int64_t shard_numel_ = 0;  // ceil(numel_ / world_size): the last shard is padded with zeros
  at::Tensor flat_;          // (world_size * shard_numel_): the gradients to reduce-scatter, then the gathered params
  at::Tensor shard_param_;   // (shard_numel_): this rank's parameters, the leaf the inner AdamW steps
  at::Tensor shard_grad_;    // (shard_numel_): the averaged gradients of this rank's shard
  std::unique_ptr<AdamW> inner_;
  PhaseMarks* marks_ = nullptr;
};

}  // namespace stepwise::bench
