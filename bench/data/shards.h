// A token path as the files it names (one file, or a glob of shards such as llm.c's fineweb_train_*.bin), read in
// order as one stream, each file recorded with its size, sha256 and token count.
#pragma once

#include "bench/tokens.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace stepwise::bench {

// A pattern with *, ? or [ is a glob: its matches, sorted by name (shard 000001 before 000002). Anything else is one
// file, returned as is (read_token_file names what is wrong with it). Throws std::runtime_error when a glob matches
// nothing.
std::vector<std::filesystem::path> expand_token_paths(const std::string& pattern);

struct TokenStream {
  Tokens tokens;           // every file's tokens, in order
  TokenFileFormat format;  // the format read (Auto resolved), the same for every file
  nlohmann::json files;    // [{path (absolute), bytes, sha256, tokens}], in order
};

// Reads and validates each file (read_token_file: header, size, token ids < vocab_size). Throws std::runtime_error
// naming the file for a bad one, and when shards read under --data-format=auto mix llm.c and nanoGPT files.
TokenStream read_token_files(const std::vector<std::filesystem::path>& paths, TokenFileFormat format,
                             int64_t vocab_size);

}  // namespace stepwise::bench
