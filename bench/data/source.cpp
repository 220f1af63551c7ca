// load_tokens.
#include "bench/data/source.h"

#include <algorithm>

namespace stepwise::bench {

namespace {
// Batches of the largest size one synthetic epoch holds.
constexpr size_t kSyntheticBatchesPerEpoch = 4;
}  // namespace

std::shared_ptr<const Tokens> load_tokens(const DataOptions& data, int64_t vocab_size, int64_t seq_len,
                                          int64_t largest_batch, uint64_t seed) {
  if (data.path) return std::make_shared<const Tokens>(read_token_file(*data.path, data.format, vocab_size).tokens);
  const auto needed = kSyntheticBatchesPerEpoch * static_cast<size_t>(largest_batch) * static_cast<size_t>(seq_len + 1);
  return std::make_shared<const Tokens>(synthetic_tokens(std::max(kMinSyntheticTokens, needed), vocab_size, seed));
}

}  // namespace stepwise::bench
