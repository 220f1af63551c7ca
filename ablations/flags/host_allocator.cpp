// host_allocator (PyTorch's CPU performance guides: jemalloc or TCMalloc instead of glibc's malloc): the process a row
// runs in starts under another host allocator. glibc returns every freed block above its mmap threshold (the logits
// and their gradient) to the kernel at once, so each step page-faults and zeroes them again; --host-allocator-mode
// picks glibc's own tunables that keep freed memory (mmap_max=0, trim_threshold=1 GiB; the default), jemalloc or
// TCMalloc (Debian's libjemalloc2 and libtcmalloc-minimal4, preloaded). Off is the C library's malloc as a user's own
// script gets it. An allocator is chosen when a process starts, so a row with another allocator than ablate's runs in a
// child process of ablate started under it (ablations/execute.cpp), and its Python rows inherit it. On a GPU it only
// touches host memory: the loader and the CPU-side work. The function is unchanged: the exact class.
#include "ablations/flags.h"

namespace stepwise::ablations::flags {

const Flag host_allocator{
    .name = "host_allocator",
    .summary =
        "the row's process started under another host allocator: glibc tunables that keep freed memory, "
        "jemalloc or TCMalloc, per --host-allocator-mode",
    .reference = "the C library's malloc as it comes (freed large blocks go back to the kernel at once)",
    .stage = "host",
    .math = MathClass::Exact,
    .applies = Applies::Both,
    .code = {"ablations/flags/host_allocator.cpp", "bench/host_allocator.cpp", "ablations/execute.cpp"},
    .apply = [](bench::RunConfig& c) { c.host_allocator = true; },
    .unmet = [](const bench::RunConfig& c) -> std::optional<std::string> {
      return bench::missing_host_allocator(c.host_allocator_mode);
    },
};

}  // namespace stepwise::ablations::flags
