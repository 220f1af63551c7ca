// pinned_memory (Raschka's step 4): the loader thread stages batches in pinned host memory; with --pinned-mode=async
// (the default) they are copied non_blocking on a copy stream the compute stream waits for, with blocking (Raschka's
// row) the copy stays blocking, which is why his table shows no gain. Pinned memory only speeds host-to-device
// copies, so on a CPU the flag is recorded as skipped.
#include "ablations/flags.h"

namespace stepwise::ablations::flags {

const Flag pinned_memory{
    .name = "pinned_memory",
    .summary = "batches staged in pinned host memory by the loader thread, copied non_blocking on a copy stream",
    .reference =
        "pageable host memory and a blocking copy (--pinned-mode=blocking: pinned but blocking, Raschka's row)",
    .stage = "data",
    .math = MathClass::Exact,
    .applies = Applies::CudaOnly,
    .precondition = "a CUDA device (pinned memory only speeds host-to-device copies)",
    .code = {"ablations/flags/pinned_memory.cpp", "bench/data/loader.cpp"},
    .apply = [](bench::RunConfig& c) { c.pinned_memory = true; },
};

}  // namespace stepwise::ablations::flags
