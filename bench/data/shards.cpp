// Globs expanded with POSIX glob(3) and sorted bytewise (not by locale), so a run reads its shards in the same order
// on every machine; the files concatenated into one stream.
#include "bench/data/shards.h"

#include "bench/data/external.h"

#include <glob.h>

#include <algorithm>
#include <stdexcept>

namespace stepwise::bench {

std::vector<std::filesystem::path> expand_token_paths(const std::string& pattern) {
  if (pattern.find_first_of("*?[") == std::string::npos) return {pattern};
  glob_t found{};
  const int status = glob(pattern.c_str(), GLOB_NOSORT, nullptr, &found);
  std::vector<std::string> names;
  if (status == 0)
    for (size_t i = 0; i < found.gl_pathc; ++i) names.emplace_back(found.gl_pathv[i]);
  globfree(&found);
  if (status == GLOB_NOMATCH || (status == 0 && names.empty()))
    throw std::runtime_error("no token file matches " + pattern);
  if (status != 0)
    throw std::runtime_error("cannot expand " + pattern + " (glob error " + std::to_string(status) + ")");
  std::sort(names.begin(), names.end());
  return {names.begin(), names.end()};
}

TokenStream read_token_files(const std::vector<std::filesystem::path>& paths, TokenFileFormat format,
                             int64_t vocab_size) {
  TokenStream stream{{}, format, nlohmann::json::array()};
  for (const auto& path : paths) {
    auto file = read_token_file(path, format, vocab_size);
    if (stream.files.empty())
      stream.format = file.format;
    else if (file.format != stream.format)
      throw std::runtime_error("token file " + path.string() + " is " + to_string(file.format) + " but " +
                               stream.files.front()["path"].get<std::string>() + " is " + to_string(stream.format) +
                               ": shards of one stream share a format");
    stream.files.push_back({{"path", std::filesystem::absolute(path).lexically_normal().string()},
                            {"bytes", std::filesystem::file_size(path)},
                            {"sha256", file_sha256(path)},
                            {"tokens", file.tokens.size()}});
    if (stream.tokens.empty())
      stream.tokens = std::move(file.tokens);  // one file (the usual case): no second copy in memory
    else
      stream.tokens.insert(stream.tokens.end(), file.tokens.begin(), file.tokens.end());
  }
  return stream;
}

}  // namespace stepwise::bench
