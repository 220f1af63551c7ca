// max_batch (Raschka's step 10): probed with the step the run will time (bench/step/max_batch.cpp), so what fits is
// what that step needs. A different batch means different data per step, so the loss check calls such a row not
// comparable. Its options bound the probe; each result records the probe itself (max_batch_probe), so they are not
// recorded again in the config.
#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration max_batch({
    .name = "max_batch",
    .position = 100,
    .summary = "batch raised to the largest power of two that fits (probed, bounded by --max-batch-limit)",
    .reference = "the base batch (--batch-size or the preset's)",
    .stage = "batch",
    .math = MathClass::Batch,
    .applies = Applies::Both,
    .code = {"ablations/flags/max_batch.cpp", "bench/step/max_batch.cpp", "bench/measure/runner.cpp",
             "ablations/run/plan.cpp", "scripts/plan_run.py"},
    .apply = [](bench::RunConfig& c) { c.max_batch = true; },
    .options = {positive_option(
                    "max_batch_limit", "a batch", [](auto& c) -> auto& { return c.max_batch_limit; },
                    "with max_batch: the largest batch the probe tries", "1024 on a GPU, 4x the base batch on a CPU")
                    .not_in_results(),
                positive_option(
                    "max_batch_time", "seconds", [](auto& c) -> auto& { return c.max_batch_time_s; },
                    "with max_batch: the probe's own time cap", "120 s on a GPU, --max-time on a CPU")
                    .not_in_results()},
});

}  // namespace
}  // namespace stepwise::ablations
