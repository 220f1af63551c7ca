// Batch sampling: non-overlapping windows of T+1 tokens, deterministic shuffles, disjoint shards.
#include "bench/data/sampler.h"

#include <gtest/gtest.h>

#include <set>

namespace stepwise::bench {
namespace {

TEST(BatchSampler, WindowsStartEveryTTokensAndLeaveRoomForTheTarget) {
  // 100 tokens, T = 10: windows start at 0, 10, ..., 80 (the one at 90 would need token 100).
  BatchSampler sampler(100, 10, 3, 7);
  EXPECT_EQ(sampler.windows(), 9u);
  std::set<size_t> seen;
  for (int b = 0; b < 3; ++b)
    for (size_t s : sampler.next_batch()) {
      EXPECT_EQ(s % 10, 0u);
      EXPECT_LE(s + 10, 99u);
      seen.insert(s);
    }
  EXPECT_EQ(seen.size(), 9u) << "an epoch visits every window once";
}

TEST(BatchSampler, SameSeedSameOrder) {
  BatchSampler a(10000, 10, 4, 1), b(10000, 10, 4, 1), c(10000, 10, 4, 2);
  std::vector<size_t> first_a, first_b, first_c;
  for (int i = 0; i < 10; ++i) {
    auto x = a.next_batch(), y = b.next_batch(), z = c.next_batch();
    first_a.insert(first_a.end(), x.begin(), x.end());
    first_b.insert(first_b.end(), y.begin(), y.end());
    first_c.insert(first_c.end(), z.begin(), z.end());
  }
  EXPECT_EQ(first_a, first_b);
  EXPECT_NE(first_a, first_c);
}

TEST(BatchSampler, EachEpochVisitsEveryWindowInANewOrder) {
  BatchSampler sampler(201, 10, 1, 5);  // 20 windows, one per batch: an epoch is 20 batches
  auto epoch = [&] {
    std::vector<size_t> order;
    for (size_t i = 0; i < sampler.windows(); ++i) order.push_back(sampler.next_batch()[0]);
    return order;
  };
  const auto e0 = epoch();
  EXPECT_EQ(sampler.epoch(), 0);
  const auto e1 = epoch();
  EXPECT_EQ(sampler.epoch(), 1);
  EXPECT_EQ(std::set<size_t>(e0.begin(), e0.end()), std::set<size_t>(e1.begin(), e1.end()))
      << "every epoch visits every window once";
  EXPECT_NE(e0, e1) << "each epoch is reshuffled";
}

TEST(BatchSampler, ShardsAreDisjointAndCoverEveryWindow) {
  BatchSampler r0(1000, 10, 1, 3, 0, 2), r1(1000, 10, 1, 3, 1, 2);
  std::set<size_t> s0, s1;
  for (size_t i = 0; i < r0.windows(); ++i) s0.insert(r0.next_batch()[0]);
  for (size_t i = 0; i < r1.windows(); ++i) s1.insert(r1.next_batch()[0]);
  for (size_t s : s0) EXPECT_FALSE(s1.count(s));
  EXPECT_EQ(s0.size() + s1.size(), BatchSampler(1000, 10, 1, 3).windows());
}

TEST(BatchSampler, TooLittleDataForOneBatchIsAClearError) {
  try {
    BatchSampler sampler(50, 10, 8, 1);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "the data holds 4 windows of 11 tokens, fewer than one batch of 8");
  }
}

}  // namespace
}  // namespace stepwise::bench
