// The host allocator a process runs under: the C library's malloc as it comes (host_allocator off: what a user's own
// script gets), glibc's malloc with tunables that keep freed memory in the process (no mmap, no trimming), or
// jemalloc / TCMalloc loaded ahead of the C library. The choice is made when a process starts (GLIBC_TUNABLES,
// LD_PRELOAD), never inside one that already allocates: a row that wants another allocator than its process's runs in
// a child process started with it (ablations/run/execute.cpp), and its Python rows inherit the same environment.
#pragma once

#include "bench/child_process.h"
#include "model/enum_names.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stepwise::bench {

enum class HostAllocatorMode {
  GlibcTunables,  // glibc's malloc, mmap_max=0 and trim_threshold=1 GiB: freed memory stays in the process
  Jemalloc,       // Debian's libjemalloc2, preloaded
  Tcmalloc,       // Debian's libtcmalloc-minimal4, preloaded
};
inline constexpr auto kHostAllocatorModeNames =
    model::enum_names<HostAllocatorMode>("host allocator mode", {{HostAllocatorMode::GlibcTunables, "glibc-tunables"},
                                                                 {HostAllocatorMode::Jemalloc, "jemalloc"},
                                                                 {HostAllocatorMode::Tcmalloc, "tcmalloc"}});
std::string to_string(HostAllocatorMode m);  // "glibc-tunables", "jemalloc", "tcmalloc"
// Throws std::invalid_argument naming the valid choices.
HostAllocatorMode host_allocator_mode_from_string(const std::string& s);
const std::vector<std::string>& host_allocator_mode_names();

// What a process runs under: nullopt is the C library's default malloc.
struct HostAllocator {
  std::optional<HostAllocatorMode> mode;
  std::string library;   // the preloaded library's file (jemalloc, tcmalloc), else empty
  std::string tunables;  // GLIBC_TUNABLES as this process started with it, else empty

  std::string name() const { return mode ? to_string(*mode) : "off"; }
  std::string describe() const;    // one line for the startup table
  nlohmann::json to_json() const;  // env.host_allocator in every result
  bool operator==(const HostAllocator&) const = default;
};

// This process's allocator, read from what is loaded (jemalloc's mallctl, TCMalloc's tc_malloc) and from
// GLIBC_TUNABLES.
HostAllocator current_host_allocator();

// Why `mode` cannot be loaded here (its library is not installed), or nullopt.
std::optional<std::string> missing_host_allocator(HostAllocatorMode mode);

// The GLIBC_TUNABLES value of the glibc-tunables mode.
std::string malloc_policy_tunables();

// The environment changes that start a child process under `mode` (nullopt: the C library's default). Other settings
// the user put in LD_PRELOAD and GLIBC_TUNABLES stay. Throws when the mode's library is not installed.
EnvironmentChanges host_allocator_environment(const std::optional<HostAllocatorMode>& mode);

}  // namespace stepwise::bench
