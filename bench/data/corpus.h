// The corpora scripts/corpus.py prepares by itself (real English text from a Debian package, tokenized offline) into
// a cache outside the checkout, named on the command line as corpus:NAME.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace stepwise::bench {

// --data=corpus:NAME
constexpr const char* kCorpusScheme = "corpus:";

// STEPWISE_CORPUS_DIR, else ${XDG_CACHE_HOME:-~/.cache}/stepwise/corpus: where scripts/corpus.py builds NAME/.
std::filesystem::path corpus_root();

// NAME when `data_path` is corpus:NAME.
std::optional<std::string> corpus_name(const std::string& data_path);

// A built corpus: <root>/NAME/ with train.bin and val.bin (nanoGPT raw uint16) and meta.json (vocab_size, tokenizer,
// the ranks file's sha256, the source package and version, each file's token count and sha256).
struct Corpus {
  std::string name;
  std::filesystem::path dir, train, val;
  nlohmann::json meta;
};

// Throws std::runtime_error for an invalid name, and for a corpus that is not built, naming the command that builds it.
Corpus find_corpus(const std::string& name);

// Throws std::runtime_error when a file read from the corpus (its {path, bytes, sha256, tokens} record) is not the
// one meta.json says was built: changed or truncated since, so the corpus must be rebuilt.
void check_corpus_file(const Corpus& corpus, const std::string& split, const nlohmann::json& record);

}  // namespace stepwise::bench
