// The token stream of a run: a token file when one is given, else the synthetic source; shared by every
// configuration so all of them see the same data.
#pragma once

#include "bench/data/tokens.h"
#include "bench/run_config.h"

#include <memory>

namespace stepwise::bench {

// At least this many synthetic tokens, so an epoch holds many batches at the usual sizes.
constexpr size_t kMinSyntheticTokens = size_t{1} << 21;

// `largest_batch` sizes the synthetic stream so even the max_batch probe's bound fits a few batches.
// Throws std::runtime_error for a bad token file (the message names the file and the problem).
struct TokenSource {
  std::shared_ptr<const Tokens> tokens;
  TokenFileFormat format;  // the format actually read (Auto resolved); unused for synthetic data
};

TokenSource load_tokens(const DataOptions& data, int64_t vocab_size, int64_t seq_len, int64_t largest_batch,
                        uint64_t seed);

}  // namespace stepwise::bench
