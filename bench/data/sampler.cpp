// Which windows make each batch: the reference's non-overlapping windows, shuffled per epoch from the seed and
// sharded by rank, so every configuration (and every implementation) sees the same data in the same order.
#include "bench/data/sampler.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace stepwise::bench {

BatchSampler::BatchSampler(size_t n_tokens, int64_t seq_len, int64_t batch_size, uint64_t seed, int rank, int world)
    : batch_size_(batch_size), seed_(seed) {
  const auto T = static_cast<size_t>(seq_len);
  size_t index = 0;
  for (size_t start = 0; start + T < n_tokens; start += T, ++index)
    if (index % static_cast<size_t>(world) == static_cast<size_t>(rank)) windows_.push_back(start);
  if (windows_.size() < static_cast<size_t>(batch_size))
    throw std::invalid_argument("the data holds " + std::to_string(windows_.size()) + " windows of " +
                                std::to_string(seq_len + 1) + " tokens" +
                                (world > 1 ? " for rank " + std::to_string(rank) : std::string()) +
                                ", fewer than one batch of " + std::to_string(batch_size));
  shuffle();
}

void BatchSampler::shuffle() {
  order_.resize(windows_.size());
  std::iota(order_.begin(), order_.end(), size_t{0});
  // A fresh generator per epoch: the order of epoch e depends only on (seed, e).
  std::mt19937_64 rng(seed_ + static_cast<uint64_t>(epoch_));
  std::shuffle(order_.begin(), order_.end(), rng);
  cursor_ = 0;
}

std::vector<size_t> BatchSampler::next_batch() {
  if (cursor_ + static_cast<size_t>(batch_size_) > order_.size()) {
    ++epoch_;
    shuffle();
  }
  std::vector<size_t> starts(static_cast<size_t>(batch_size_));
  for (auto& s : starts) s = windows_[order_[cursor_++]];
  return starts;
}

}  // namespace stepwise::bench
