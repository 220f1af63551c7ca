// The token streams of a run: a token file, a glob of shards, a corpus from the cache, or the synthetic source;
// shared by every configuration so all of them see the same data. With a validation stream when asked for one.
#pragma once

#include "bench/run_config.h"
#include "bench/tokens.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>

namespace stepwise::bench {

// At least this many synthetic tokens, so an epoch holds many batches at the usual sizes.
constexpr size_t kMinSyntheticTokens = size_t{1} << 21;

struct TokenSource {
  std::shared_ptr<const Tokens> tokens;  // the training stream
  TokenFileFormat format;                // the format actually read (Auto resolved); unused for synthetic data
  // The validation stream, only when load_tokens was asked for one: the source's val.bin, --val-data, or the held-out
  // tail of the training stream (then `tokens` ends where it begins: the training sampler never sees it).
  std::shared_ptr<const Tokens> val_tokens;
  // The vocabulary the data declares (meta.json, or nanoGPT's meta.pkl); none for synthetic data and bare files.
  std::optional<int64_t> vocab_size;
  // What was read, for the result documents: {kind: synthetic|file|corpus, files: [{path, bytes, sha256, tokens}],
  // val_files, val: file|split|none, val_fraction, vocab_size, vocab_source: meta.json|meta.pkl|model, tokenizer,
  // train_tokens, val_tokens} and, for a corpus, corpus: {name, source, ranks} from its meta.json.
  nlohmann::json provenance;
};

// `vocab_size`: the model's vocabulary, the bound token ids are checked against when the data declares none (a
// declared vocabulary is checked instead; ablations/command_line/resolve.h then sizes the model from it).
// `largest_batch` sizes the synthetic stream so even the max_batch probe's bound fits a few batches. `need_validation`:
// also load a validation stream; without it (throughput runs) the whole training stream is trained on, as always.
// Throws std::runtime_error for bad data, naming the file and the problem (a missing corpus names the command that
// builds it).
TokenSource load_tokens(const DataOptions& data, int64_t vocab_size, int64_t seq_len, int64_t largest_batch,
                        uint64_t seed, bool need_validation = false);

}  // namespace stepwise::bench
