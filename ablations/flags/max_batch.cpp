// max_batch (Raschka's step 10): the batch raised to the largest power of two whose step fits in memory, probed with
// the step the run will time (bench/step/max_batch.cpp) and bounded by --max-batch-limit. A different batch means
// different data per step, so the loss check calls such a row not comparable.
#include "ablations/flags.h"

namespace stepwise::ablations::flags {

const Flag max_batch{
    .name = "max_batch",
    .summary = "batch raised to the largest power of two that fits (probed, bounded by --max-batch-limit)",
    .reference = "the base batch (--batch-size or the preset's)",
    .stage = "batch",
    .math = MathClass::Batch,
    .applies = Applies::Both,
    .code = {"ablations/flags/max_batch.cpp", "bench/step/max_batch.cpp", "bench/measure/runner.cpp"},
    .apply = [](bench::RunConfig& c) { c.max_batch = true; },
};

}  // namespace stepwise::ablations::flags
