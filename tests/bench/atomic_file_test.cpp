// Atomic writes leave either the old or the whole new file, and no temporary behind.
#include "bench/atomic_file.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <fstream>
#include <sstream>

namespace stepwise::bench {
namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(AtomicFile, WritesReplacesAndLeavesNoTemporary) {
  const auto dir = std::filesystem::temp_directory_path() / ("stepwise-atomic-" + std::to_string(getpid()));
  const auto path = dir / "sub" / "result.json";
  write_file_atomically(path, "{\"a\": 1}\n");
  EXPECT_EQ(read(path), "{\"a\": 1}\n");
  write_file_atomically(path, "{\"a\": 2}\n");
  EXPECT_EQ(read(path), "{\"a\": 2}\n");
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(path.parent_path())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1u);
  std::filesystem::remove_all(dir);
}

TEST(AtomicFile, UnwritableDirectoryIsAClearError) {
  if (geteuid() == 0) {
    // root can write anywhere; a path under a regular file cannot be created by anyone.
    const auto file = std::filesystem::temp_directory_path() / ("stepwise-file-" + std::to_string(getpid()));
    std::ofstream(file) << "x";
    EXPECT_THROW(check_writable_directory(file / "results"), std::runtime_error);
    EXPECT_THROW(write_file_atomically(file / "results" / "a.json", "{}"), std::runtime_error);
    std::filesystem::remove(file);
  } else {
    EXPECT_THROW(check_writable_directory("/proc/stepwise"), std::runtime_error);
  }
}

}  // namespace
}  // namespace stepwise::bench
