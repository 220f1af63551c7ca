// Which windows of the token stream form each batch: non-overlapping windows of T+1 tokens, shuffled per epoch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace stepwise::bench {

// Windows start at 0, T, 2T, ... (the reference's stride = max_length), each holding T+1 tokens so the
// targets are the inputs shifted by one. Batches drop the last partial batch of an epoch. With world > 1
// a rank sees only windows whose index is congruent to its rank, so ranks read disjoint shards.
class BatchSampler {
 public:
  // Throws std::invalid_argument if the shard holds fewer windows than one batch.
  BatchSampler(size_t n_tokens, int64_t seq_len, int64_t batch_size, uint64_t seed, int rank = 0, int world = 1);

  // Start offsets (in tokens) of the next batch's B windows.
  std::vector<size_t> next_batch();
  int64_t epoch() const { return epoch_; }
  size_t windows() const { return windows_.size(); }

 private:
  void shuffle();

  std::vector<size_t> windows_;  // start offsets of this rank's windows
  std::vector<size_t> order_;    // this epoch's permutation of windows_
  size_t cursor_ = 0;
  int64_t batch_size_;
  uint64_t seed_;
  int64_t epoch_ = 0;
};

}  // namespace stepwise::bench
