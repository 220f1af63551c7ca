// What bench/data asks other programs for: a file's sha256 (coreutils' sha256sum) and the vocabulary in nanoGPT's
// meta.pkl (the project's Python, with an unpickler that builds no objects: C++ never parses a pickle).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace stepwise::bench {

// The file's sha256 as 64 lowercase hex digits. Throws std::runtime_error naming the file when sha256sum fails.
std::string file_sha256(const std::filesystem::path& path);

// meta.pkl's vocab_size, read by bench::python_interpreter(). Only plain data is unpickled (dicts, strings,
// numbers): a pickle that names any class or function is refused, not run. Throws std::runtime_error naming the file
// and what Python said.
int64_t pickle_vocab_size(const std::filesystem::path& meta_pkl);

}  // namespace stepwise::bench
