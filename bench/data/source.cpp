// The run's one token stream: the token file when given, else the synthetic source, sized so the largest batch any
// configuration may probe still has data; shared by every configuration.
#include "bench/data/source.h"

#include <algorithm>

namespace stepwise::bench {

namespace {
// Batches of the largest size one synthetic epoch holds.
constexpr size_t kSyntheticBatchesPerEpoch = 4;
// At most 512 MB of tokens: an absurd --batch-size must fail its configuration with an out-of-memory reason
// (bench/measure/runner.cpp), not the whole run while the stream is built.
constexpr size_t kMaxSyntheticTokens = size_t{1} << 28;
}  // namespace

TokenSource load_tokens(const DataOptions& data, int64_t vocab_size, int64_t seq_len, int64_t largest_batch,
                        uint64_t seed) {
  if (data.path) {
    auto file = read_token_file(*data.path, data.format, vocab_size);
    return {std::make_shared<const Tokens>(std::move(file.tokens)), file.format};
  }
  const double wanted = static_cast<double>(kSyntheticBatchesPerEpoch) * static_cast<double>(largest_batch) *
                        static_cast<double>(seq_len + 1);
  const auto needed = static_cast<size_t>(std::min(wanted, static_cast<double>(kMaxSyntheticTokens)));
  return {std::make_shared<const Tokens>(synthetic_tokens(std::max(kMinSyntheticTokens, needed), vocab_size, seed)),
          data.format};
}

}  // namespace stepwise::bench
