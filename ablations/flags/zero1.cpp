// zero1 (llm.c's -z 1, ZeRO stage 1): each rank keeps 1/world_size of the optimizer state. Each rank receives its
// shard of the averaged gradients (a reduce-scatter), steps AdamW (the fused kernel with fused_adamw) on its shard,
// and the updated shards are all-gathered. All of it runs on c10d (NCCL on GPUs, Gloo on a CPU, where reduce-scatter
// is an all-reduce the rank slices, as the result says). AdamW is elementwise, so a shard steps as the whole would,
// but NCCL's reduce-scatter may sum the ranks' gradients in another order than its all-reduce: the fp32 class.
#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration zero1({
    .name = "zero1",
    .position = 150,
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
});

}  // namespace
}  // namespace stepwise::ablations
