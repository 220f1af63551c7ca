// meta.json read here; meta.pkl handed to the project's Python (bench/data/external.h), since only Python can read a
// pickle and a C++ reader of one would be a second, partial implementation.
#include "bench/data/vocabulary.h"

#include "bench/data/external.h"

#include <fstream>
#include <stdexcept>

namespace stepwise::bench {

nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path.string() + ": cannot be opened");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path.string() + ": not valid JSON (" + e.what() + ")");
  }
}

std::optional<DeclaredVocabulary> meta_json_vocabulary(const std::filesystem::path& meta_json) {
  const auto meta = read_json_file(meta_json);
  if (!meta.is_object() || !meta.contains("vocab_size")) return std::nullopt;
  const auto& size = meta["vocab_size"];
  if (!size.is_number_integer() || size.get<int64_t>() <= 0)
    throw std::runtime_error(meta_json.string() + ": vocab_size must be a positive integer, got " + size.dump());
  return DeclaredVocabulary{size.get<int64_t>(), "meta.json", meta_json, meta.value("tokenizer", nlohmann::json())};
}

std::optional<DeclaredVocabulary> declared_vocabulary(const std::filesystem::path& directory) {
  std::error_code ec;
  const auto json = directory / "meta.json";
  if (std::filesystem::is_regular_file(json, ec))
    if (auto declared = meta_json_vocabulary(json)) return declared;
  const auto pkl = directory / "meta.pkl";
  if (std::filesystem::is_regular_file(pkl, ec))
    return DeclaredVocabulary{pickle_vocab_size(pkl), "meta.pkl", pkl, nlohmann::json()};
  return std::nullopt;
}

}  // namespace stepwise::bench
