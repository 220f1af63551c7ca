// zero1 (llm.c's -z 1, ZeRO stage 1): AdamW's state sharded across the data-parallel ranks. Instead of all-reducing
// the gradients and stepping the whole model on every rank, each rank receives its shard of the averaged gradients
// (a reduce-scatter), steps AdamW (the fused kernel with fused_adamw) on its shard of the parameters and moments, and
// the updated shards are all-gathered: each rank keeps 1/world_size of the optimizer state. All of it runs on c10d
// (NCCL on GPUs, Gloo on a CPU, where reduce-scatter is an all-reduce the rank slices, as the result says), in
// bench/distributed/zero1.cpp. It needs data-parallel ranks: in a single process it is a planned skip. AdamW is
// elementwise, so a shard steps as the whole would, but NCCL's reduce-scatter may sum the ranks' gradients in another
// order than its all-reduce: the fp32 class.
#include "ablations/flags.h"

namespace stepwise::ablations::flags {

const Flag zero1{
    .name = "zero1",
    .summary =
        "AdamW's state sharded across the data-parallel ranks: gradients reduce-scattered, each rank steps its shard, "
        "parameters all-gathered (ZeRO-1)",
    .reference = "every rank all-reduces the gradients and steps the whole model's AdamW state",
    .stage = "optimizer",
    .math = MathClass::Fp32,
    .applies = Applies::Both,
    .precondition = "data-parallel ranks (--nproc-per-node=2 or more, or torchrun)",
    .min_world_size = 2,
    .code = {"ablations/flags/zero1.cpp", "bench/distributed/zero1.cpp", "bench/step/train_state.cpp"},
    .apply = [](bench::RunConfig& c) { c.zero1 = true; },
};

}  // namespace stepwise::ablations::flags
