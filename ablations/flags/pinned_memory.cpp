// pinned_memory (Raschka's step 4): his row kept the copy blocking, which is why his table shows no gain; by default
// the copy is non_blocking on a copy stream the compute stream waits for, and --pinned-mode=blocking measures his row.
// The loader thread does both (bench/data/loader.cpp).
#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration pinned_memory({
    .name = "pinned_memory",
    .position = 40,
    .summary = "batches staged in pinned host memory by the loader thread, copied non_blocking on a copy stream",
    .reference =
        "pageable host memory and a blocking copy (--pinned-mode=blocking: pinned but blocking, Raschka's row)",
    .stage = "data",
    .math = MathClass::Exact,
    .applies = Applies::CudaOnly,
    .precondition = "a CUDA device (pinned memory only speeds host-to-device copies)",
    .code = {"ablations/flags/pinned_memory.cpp", "bench/data/loader.cpp", "bench/python/loader.py",
             "bench/python/request.py"},
    .apply = [](bench::RunConfig& c) { c.pinned_memory = true; },
    .options = {choice_option(
                    "pinned_mode", bench::kPinnedModeNames, [](auto& c) -> auto& { return c.pinned_mode; },
                    "with pinned_memory: async copies non_blocking on a copy stream that overlaps compute; "
                    "blocking is pinned but blocking (Raschka's row, which measured no gain)")
                    .in_suite_files()},
});

}  // namespace
}  // namespace stepwise::ablations
