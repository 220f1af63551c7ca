// Writing a file so that readers see either the old content or the whole new content, never a partial write.
#pragma once

#include <filesystem>
#include <string>

namespace stepwise::bench {

// Writes to a temporary file in the same directory, flushes it to disk, then renames it over `path`.
// Creates missing parent directories. Throws std::runtime_error naming the path and the cause.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

// Throws std::runtime_error if a file cannot be created in `dir` (creating `dir` if needed).
void check_writable_directory(const std::filesystem::path& dir);

}  // namespace stepwise::bench
