// host_allocator (PyTorch's CPU performance guides: jemalloc or TCMalloc instead of glibc's malloc). glibc returns
// every freed block above its mmap threshold (the logits and their gradient) to the kernel at once, so each step
// page-faults and zeroes them again. Off is the C library's malloc as a user's own script gets it. An allocator is
// chosen when a process starts, so a row with another allocator than ablate's runs in a child process of ablate started
// under it (ablations/run/execute.cpp), and its Python rows inherit it. On a GPU it only touches host memory: the
// loader and the CPU-side work.
#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration host_allocator({
    .name = "host_allocator",
    .position = 130,
    .summary = "the row's process started under another host allocator: glibc tunables that keep freed memory, "
               "jemalloc or TCMalloc, per --host-allocator-mode",
    .reference = "the C library's malloc as it comes (freed large blocks go back to the kernel at once)",
    .stage = "host",
    .math = MathClass::Exact,
    .applies = Applies::Both,
    .code = {"ablations/flags/host_allocator.cpp", "bench/host_allocator.cpp", "ablations/run/execute.cpp"},
    .apply = [](bench::RunConfig& c) { c.host_allocator = true; },
    .unmet = [](const bench::RunConfig& c) -> std::optional<std::string> {
      return bench::missing_host_allocator(c.host_allocator_mode);
    },
    .options = {choice_option(
                    "host_allocator_mode", bench::kHostAllocatorModeNames,
                    [](auto& c) -> auto& { return c.host_allocator_mode; },
                    "with host_allocator: the allocator the row's own process starts under: glibc-tunables "
                    "is glibc's malloc with mmap_max=0 and trim_threshold=1 GiB (freed memory stays in the "
                    "process); jemalloc and tcmalloc are Debian's libjemalloc2 and libtcmalloc-minimal4, "
                    "preloaded (set-up installs both)")
                    .in_suite_files()},
});

}  // namespace
}  // namespace stepwise::ablations
