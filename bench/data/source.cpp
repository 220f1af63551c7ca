// The run's token streams, read once and shared by every configuration: the files a path names (or a corpus's), its
// validation stream, and the record of what was read; else the synthetic source, sized so the largest batch any
// configuration may probe still has data.
#include "bench/data/source.h"

#include "bench/data/corpus.h"
#include "bench/data/shards.h"
#include "bench/data/vocabulary.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace stepwise::bench {

namespace {
// Batches of the largest size one synthetic epoch holds.
constexpr size_t kSyntheticBatchesPerEpoch = 4;
// At most 512 MB of tokens: an absurd --batch-size must fail its configuration with an out-of-memory reason
// (bench/measure/runner.cpp), not the whole run while the stream is built.
constexpr size_t kMaxSyntheticTokens = size_t{1} << 28;

std::string shortest(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

void check_fraction(double fraction) {
  if (!(fraction > 0.0 && fraction < 1.0))
    throw std::runtime_error("the validation fraction must be in (0, 1), got " + shortest(fraction));
}

// The last `fraction` of `tokens` as the validation stream; `tokens` keeps the head.
Tokens hold_out_tail(Tokens& tokens, double fraction) {
  check_fraction(fraction);
  const auto held = static_cast<size_t>(std::llround(static_cast<double>(tokens.size()) * fraction));
  Tokens tail(tokens.end() - static_cast<std::ptrdiff_t>(held), tokens.end());
  tokens.resize(tokens.size() - held);
  return tail;
}

void check_holds_a_sequence(const Tokens& tokens, int64_t seq_len, const std::string& what) {
  if (tokens.size() <= static_cast<size_t>(seq_len))
    throw std::runtime_error(what + " holds " + std::to_string(tokens.size()) + " tokens, fewer than one sequence of " +
                             std::to_string(seq_len + 1) + " (--seq-len + 1)");
}

TokenSource synthetic(const DataOptions& data, int64_t vocab_size, int64_t seq_len, int64_t largest_batch,
                      uint64_t seed, bool need_validation) {
  const double wanted = static_cast<double>(kSyntheticBatchesPerEpoch) * static_cast<double>(largest_batch) *
                        static_cast<double>(seq_len + 1);
  auto count =
      std::max(kMinSyntheticTokens, static_cast<size_t>(std::min(wanted, static_cast<double>(kMaxSyntheticTokens))));
  if (need_validation) {
    check_fraction(data.val_fraction);
    count = static_cast<size_t>(std::ceil(static_cast<double>(count) / (1.0 - data.val_fraction)));
  }
  auto tokens = synthetic_tokens(count, vocab_size, seed);
  TokenSource out;
  out.format = data.format;
  if (need_validation) {
    out.val_tokens = std::make_shared<const Tokens>(hold_out_tail(tokens, data.val_fraction));
    check_holds_a_sequence(*out.val_tokens, seq_len, "the held-out synthetic tail");
  }
  out.provenance = {{"kind", "synthetic"},
                    {"files", nlohmann::json::array()},
                    {"val_files", nlohmann::json::array()},
                    {"val", need_validation ? "split" : "none"},
                    {"val_fraction", need_validation ? nlohmann::json(data.val_fraction) : nlohmann::json()},
                    {"vocab_size", vocab_size},
                    {"vocab_source", "model"},
                    {"tokenizer", nullptr},
                    {"seed", seed},
                    {"train_tokens", tokens.size()},
                    {"val_tokens", out.val_tokens ? nlohmann::json(out.val_tokens->size()) : nlohmann::json()}};
  out.tokens = std::make_shared<const Tokens>(std::move(tokens));
  return out;
}

}  // namespace

TokenSource load_tokens(const DataOptions& data, int64_t vocab_size, int64_t seq_len, int64_t largest_batch,
                        uint64_t seed, bool need_validation) {
  if (!data.path) return synthetic(data, vocab_size, seq_len, largest_batch, seed, need_validation);

  // What the path names: the training files, the validation files the source has of its own, the vocabulary.
  std::optional<Corpus> corpus;
  std::vector<std::filesystem::path> train_paths, own_val_paths;
  std::optional<DeclaredVocabulary> declared;
  if (const auto name = corpus_name(*data.path)) {
    corpus = find_corpus(*name);
    train_paths = {corpus->train};
    if (std::filesystem::exists(corpus->val)) own_val_paths = {corpus->val};
    declared = meta_json_vocabulary(corpus->dir / "meta.json");
  } else {
    train_paths = expand_token_paths(*data.path);
    const auto dir = train_paths.front().parent_path();
    declared = declared_vocabulary(dir.empty() ? "." : dir);
    // nanoGPT's layout: train.bin with val.bin beside it.
    const auto beside = train_paths.front().parent_path() / "val.bin";
    if (train_paths.size() == 1 && train_paths.front().filename() == "train.bin" && std::filesystem::exists(beside))
      own_val_paths = {beside};
  }
  // A declared vocabulary bounds the ids (the model is then sized from it); else the model's does.
  const int64_t bound = declared ? declared->size : vocab_size;
  auto train = read_token_files(train_paths, data.format, bound);
  if (corpus) check_corpus_file(*corpus, "train", train.files.front());

  TokenSource out;
  out.format = train.format;
  out.vocab_size = declared ? std::optional(declared->size) : std::nullopt;
  auto& p = out.provenance;
  p = {{"kind", corpus ? "corpus" : "file"},
       {"files", train.files},
       {"val_files", nlohmann::json::array()},
       {"val", "none"},
       {"val_fraction", nullptr},
       {"vocab_size", bound},
       {"vocab_source", declared ? declared->source : "model"},
       {"tokenizer", declared ? declared->tokenizer : nlohmann::json()}};
  if (corpus)
    p["corpus"] = {{"name", corpus->name},
                   {"source", corpus->meta.value("source", nlohmann::json())},
                   {"ranks", corpus->meta.value("ranks", nlohmann::json())}};

  if (need_validation) {
    const auto val_paths = data.val_path ? expand_token_paths(*data.val_path) : own_val_paths;
    if (!val_paths.empty()) {
      auto val = read_token_files(val_paths, data.format, bound);
      if (corpus && !data.val_path) check_corpus_file(*corpus, "val", val.files.front());
      p["val"] = "file";
      p["val_files"] = val.files;
      out.val_tokens = std::make_shared<const Tokens>(std::move(val.tokens));
      check_holds_a_sequence(*out.val_tokens, seq_len, "the validation stream");
    } else {
      p["val"] = "split";
      p["val_fraction"] = data.val_fraction;
      out.val_tokens = std::make_shared<const Tokens>(hold_out_tail(train.tokens, data.val_fraction));
      check_holds_a_sequence(*out.val_tokens, seq_len,
                             "the held-out tail (" + shortest(data.val_fraction) + " of the training stream)");
    }
  }
  p["train_tokens"] = train.tokens.size();
  p["val_tokens"] = out.val_tokens ? nlohmann::json(out.val_tokens->size()) : nlohmann::json();
  out.tokens = std::make_shared<const Tokens>(std::move(train.tokens));
  return out;
}

}  // namespace stepwise::bench
