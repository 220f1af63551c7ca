// The vocabulary a token file declares beside it: a meta.json with vocab_size (stepwise's corpora write one), else
// nanoGPT's meta.pkl (character-level data sets keep their vocabulary there), read by the project's Python.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace stepwise::bench {

struct DeclaredVocabulary {
  int64_t size;
  std::string source;          // "meta.json" or "meta.pkl"
  std::filesystem::path file;  // the file that declares it
  nlohmann::json tokenizer;    // meta.json's "tokenizer" ("gpt2", "bytes", ...), else null
};

// What `directory` declares: meta.json when it has a vocab_size, else meta.pkl, else nothing. Throws
// std::runtime_error naming the file for a meta.json that is not JSON or whose vocab_size is not a positive integer,
// and for a meta.pkl without one.
std::optional<DeclaredVocabulary> declared_vocabulary(const std::filesystem::path& directory);

// meta.json's vocabulary alone (a corpus's meta.json must declare one). Throws as above.
std::optional<DeclaredVocabulary> meta_json_vocabulary(const std::filesystem::path& meta_json);

// Reads a JSON file; throws std::runtime_error naming it when it cannot be read or parsed.
nlohmann::json read_json_file(const std::filesystem::path& path);

}  // namespace stepwise::bench
