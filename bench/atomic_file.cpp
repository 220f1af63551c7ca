// Atomic file writes (temp file, fsync, rename): a result is either on disk whole or not at all, even when the run
// is killed mid-write.
#include "bench/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace stepwise::bench {

namespace {

std::runtime_error io_error(const std::filesystem::path& path, const std::string& what) {
  return std::runtime_error("cannot write " + path.string() + ": " + what + " (" + std::strerror(errno) + ")");
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, const std::string& content) {
  const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create directory " + dir.string() + ": " + ec.message());
  const auto tmp = dir / ("." + path.filename().string() + ".tmp." + std::to_string(getpid()));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw io_error(tmp, "open failed");
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      ::close(fd);
      ::unlink(tmp.c_str());
      throw io_error(tmp, "write failed");
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw io_error(tmp, "flush failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw io_error(path, "rename failed");
  }
}

void check_writable_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("output directory " + dir.string() + " cannot be created: " + ec.message());
  const auto probe = dir / (".stepwise-write-test." + std::to_string(getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    throw std::runtime_error("output directory " + dir.string() + " is not writable: " + std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace stepwise::bench
