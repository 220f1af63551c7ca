// The checkout a binary runs in, found once per process.
#include "bench/source_dir.h"

#include <cstdlib>
#include <system_error>

namespace stepwise::bench {

namespace {

bool is_checkout(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_directory(dir / "ablations" / "suites", ec);
}

}  // namespace

std::filesystem::path locate_source_dir() {
  if (const char* env = std::getenv("STEPWISE_SOURCE_DIR"); env && *env) return env;
  const std::filesystem::path built = STEPWISE_SOURCE_DIR;
  if (is_checkout(built)) return built;
  std::error_code ec;
  for (auto dir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path(); !ec && !dir.empty();
       dir = dir.parent_path()) {
    if (is_checkout(dir)) return dir;
    if (dir == dir.root_path()) break;
  }
  return built;
}

const std::filesystem::path& source_dir() {
  static const std::filesystem::path dir = locate_source_dir();
  return dir;
}

}  // namespace stepwise::bench
