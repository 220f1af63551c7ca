// The host allocator modes: finding each library, telling which one this process runs under, and the environment
// that starts a child under one.
#include "bench/host_allocator.h"

#include "bench/source_dir.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

namespace stepwise::bench {

namespace {

// Trim only beyond this much free memory at the top of the heap: in practice never during a run.
constexpr long kTrimThresholdBytes = 1L << 30;

// The shared object each preloaded mode loads, as Debian's packages name it, and the package that holds it.
struct Library {
  const char* file;
  const char* package;
};
Library library_of(HostAllocatorMode m) {
  return m == HostAllocatorMode::Jemalloc ? Library{"libjemalloc.so.2", "libjemalloc2"}
                                          : Library{"libtcmalloc_minimal.so.4", "libtcmalloc-minimal4"};
}

// Where the libraries are looked for: beside the C library (Debian's multiarch folder), its /usr twin, and the
// offline bundle's unpacked packages (scripts/setup.sh --bundle) under the source tree.
std::vector<std::filesystem::path> library_dirs() {
  std::vector<std::filesystem::path> dirs;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&gnu_get_libc_version), &info) && info.dli_fname) {
    const auto libc_dir = std::filesystem::path(info.dli_fname).parent_path();  // e.g. /lib/x86_64-linux-gnu
    dirs.push_back(libc_dir);
    dirs.push_back(std::filesystem::path("/usr/lib") / libc_dir.filename());
    dirs.push_back(source_dir() / "deps" / "root" / "usr" / "lib" / libc_dir.filename());
  }
  dirs.push_back("/usr/lib");
  dirs.push_back("/usr/local/lib");
  return dirs;
}

std::optional<std::filesystem::path> find_library(HostAllocatorMode m) {
  for (const auto& dir : library_dirs())
    if (std::error_code ec; std::filesystem::exists(dir / library_of(m).file, ec)) return dir / library_of(m).file;
  return std::nullopt;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// `list` split on `separator`, without the entries `drop` says to drop, joined again.
template <typename Drop>
std::string without(const std::string& list, char separator, Drop drop) {
  std::string out, item;
  std::istringstream in(list);
  while (std::getline(in, item, separator))
    if (!item.empty() && !drop(item)) out += (out.empty() ? "" : std::string(1, separator)) + item;
  return out;
}

bool is_allocator_library(const std::string& path) {
  const auto name = std::filesystem::path(path).filename().string();
  return name.starts_with("libjemalloc") || name.starts_with("libtcmalloc");
}

bool is_policy_tunable(const std::string& tunable) {
  return tunable.starts_with("glibc.malloc.mmap_max=") || tunable.starts_with("glibc.malloc.trim_threshold=");
}

// The file a loaded symbol comes from.
std::string library_holding(void* symbol) {
  Dl_info info{};
  return symbol && dladdr(symbol, &info) && info.dli_fname ? info.dli_fname : "";
}

}  // namespace

std::string to_string(HostAllocatorMode m) { return kHostAllocatorModeNames.to_string(m); }

const std::vector<std::string>& host_allocator_mode_names() {
  static const std::vector<std::string> names = kHostAllocatorModeNames.names();
  return names;
}

HostAllocatorMode host_allocator_mode_from_string(const std::string& s) {
  return kHostAllocatorModeNames.from_string(s);
}

std::string malloc_policy_tunables() {
  return "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=" + std::to_string(kTrimThresholdBytes);
}

HostAllocator current_host_allocator() {
  HostAllocator a;
  a.tunables = env_or_empty("GLIBC_TUNABLES");
  // Each library's own entry point, found only when it is loaded: it then serves malloc for the whole process.
  if (void* mallctl = dlsym(RTLD_DEFAULT, "mallctl")) {
    a.mode = HostAllocatorMode::Jemalloc;
    a.library = library_holding(mallctl);
  } else if (void* tc_malloc = dlsym(RTLD_DEFAULT, "tc_malloc")) {
    a.mode = HostAllocatorMode::Tcmalloc;
    a.library = library_holding(tc_malloc);
  } else if (a.tunables.find(malloc_policy_tunables()) != std::string::npos) {
    a.mode = HostAllocatorMode::GlibcTunables;  // glibc read them when the process started
  }
  return a;
}

std::string HostAllocator::describe() const {
  if (!mode)
    return "off: the C library's malloc as it comes" + (tunables.empty() ? "" : " (GLIBC_TUNABLES=" + tunables + ")");
  if (*mode == HostAllocatorMode::GlibcTunables)
    return "glibc-tunables: freed memory kept in the process (" + tunables + ")";
  return name() + " (" + library + ")";
}

nlohmann::json HostAllocator::to_json() const {
  return {{"mode", name()},
          {"library", library.empty() ? nlohmann::json() : nlohmann::json(library)},
          {"glibc_tunables", tunables.empty() ? nlohmann::json() : nlohmann::json(tunables)}};
}

std::optional<std::string> missing_host_allocator(HostAllocatorMode mode) {
  if (mode == HostAllocatorMode::GlibcTunables || find_library(mode)) return std::nullopt;
  return std::string(library_of(mode).file) + " is not installed (Debian's " + library_of(mode).package +
         "; scripts/setup.sh installs it)";
}

EnvironmentChanges host_allocator_environment(const std::optional<HostAllocatorMode>& mode) {
  // What the user preloads or tunes for other reasons stays; only the allocators and the policy's two tunables move.
  std::string preload = without(env_or_empty("LD_PRELOAD"), ':', is_allocator_library);
  std::string tunables = without(env_or_empty("GLIBC_TUNABLES"), ':', is_policy_tunable);
  if (mode == HostAllocatorMode::GlibcTunables)
    tunables = tunables.empty() ? malloc_policy_tunables() : tunables + ":" + malloc_policy_tunables();
  if (mode && *mode != HostAllocatorMode::GlibcTunables) {
    const auto library = find_library(*mode);
    if (!library) throw std::runtime_error(*missing_host_allocator(*mode));
    preload = preload.empty() ? library->string() : library->string() + ":" + preload;
  }
  const auto value = [](const std::string& v) { return v.empty() ? std::nullopt : std::optional<std::string>(v); };
  return {{"LD_PRELOAD", value(preload)}, {"GLIBC_TUNABLES", value(tunables)}};
}

}  // namespace stepwise::bench
