// Finding a corpus in the cache, and refusing one whose files are not the ones its meta.json describes.
#include "bench/data/corpus.h"

#include "bench/data/vocabulary.h"

#include <pwd.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <stdexcept>

namespace stepwise::bench {

namespace {

// The command that builds a corpus: it installs the Debian package the text comes from when missing, then runs
// scripts/corpus.py build NAME with the project's Python (tiktoken for GPT-2's BPE).
std::string build_command(const std::string& name) { return "scripts/setup.sh --corpus " + name; }

std::filesystem::path home() {
  if (const char* h = std::getenv("HOME"); h && *h) return h;
  if (const auto* pw = getpwuid(getuid()); pw && pw->pw_dir) return pw->pw_dir;
  throw std::runtime_error("cannot find the corpus cache: HOME is not set (set STEPWISE_CORPUS_DIR)");
}

bool valid_name(const std::string& name) {
  if (name.empty() || name.front() == '.') return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  return true;
}

}  // namespace

std::filesystem::path corpus_root() {
  if (const char* dir = std::getenv("STEPWISE_CORPUS_DIR"); dir && *dir) return dir;
  if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache && *cache)
    return std::filesystem::path(cache) / "stepwise" / "corpus";
  return home() / ".cache" / "stepwise" / "corpus";
}

std::optional<std::string> corpus_name(const std::string& data_path) {
  const std::string scheme = kCorpusScheme;
  if (data_path.rfind(scheme, 0) != 0) return std::nullopt;
  return data_path.substr(scheme.size());
}

Corpus find_corpus(const std::string& name) {
  if (!valid_name(name))
    throw std::runtime_error("corpus name '" + name +
                             "' is not valid (letters, digits, '-', '_' and '.'; scripts/corpus.py list names them)");
  Corpus c{name, corpus_root() / name, {}, {}, {}};
  c.train = c.dir / "train.bin";
  c.val = c.dir / "val.bin";
  const auto meta = c.dir / "meta.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(meta, ec))
    throw std::runtime_error("corpus '" + name + "' is not built here (no " + meta.string() + "): build it with " +
                             build_command(name) + " (scripts/corpus.py list names the corpora it can build)");
  c.meta = read_json_file(meta);
  if (!meta_json_vocabulary(meta))
    throw std::runtime_error(meta.string() + " declares no vocab_size: rebuild the corpus with " + build_command(name));
  if (!std::filesystem::is_regular_file(c.train, ec))
    throw std::runtime_error("corpus '" + name + "' has no " + c.train.string() + ": rebuild it with " +
                             build_command(name));
  return c;
}

void check_corpus_file(const Corpus& corpus, const std::string& split, const nlohmann::json& record) {
  if (!corpus.meta.contains(split) || !corpus.meta[split].is_object()) return;
  const auto& built = corpus.meta[split];
  for (const char* key : {"sha256", "tokens"})
    if (built.contains(key) && built[key] != record[key])
      throw std::runtime_error("corpus '" + corpus.name + "': " + record["path"].get<std::string>() + " has " + key +
                               " " + record[key].dump() + " but meta.json says " + built[key].dump() +
                               " (changed since it was built): rebuild it with " + build_command(corpus.name));
}

}  // namespace stepwise::bench
