// The loader delivers (inputs, targets) windows of the token stream, with targets shifted by one.
#include "bench/data/loader.h"
#include "tests/support.h"

#include <gtest/gtest.h>

#include <numeric>

namespace stepwise::bench {
namespace {

TEST(Loader, BatchesAreWindowsWithTargetsShiftedByOne) {
  auto tokens = std::make_shared<Tokens>(1000);
  std::iota(tokens->begin(), tokens->end(), uint16_t{0});  // token i has id i: windows are easy to recognise
  RunConfig o;
  o.batch_size = 4;
  o.seq_len = 16;
  o.device = testing::test_device();
  o.pinned_memory = o.device.is_cuda();
  Loader loader(tokens, o);
  for (int b = 0; b < 20; ++b) {
    auto batch = loader.next();
    ASSERT_EQ(batch.x.sizes(), (std::vector<int64_t>{4, 16}));
    auto x = batch.x.cpu(), y = batch.y.cpu();
    for (int64_t row = 0; row < 4; ++row) {
      const int64_t start = x[row][0].item<int64_t>();
      EXPECT_EQ(start % 16, 0);
      EXPECT_TRUE(at::equal(x[row], at::arange(start, start + 16, at::kLong)));
      EXPECT_TRUE(at::equal(y[row], at::arange(start + 1, start + 17, at::kLong)));
    }
  }
}

TEST(Loader, SameSeedSameBatches) {
  auto tokens = std::make_shared<Tokens>(synthetic_tokens(5000, 50257, 1));
  RunConfig o;
  o.batch_size = 2;
  o.seq_len = 8;
  Loader a(tokens, o), b(tokens, o);
  for (int i = 0; i < 50; ++i) EXPECT_TRUE(at::equal(a.next().x, b.next().x));
}

TEST(Loader, PinnedMemoryNeedsCuda) {
  auto tokens = std::make_shared<Tokens>(1000);
  RunConfig o;
  o.batch_size = 2;
  o.seq_len = 8;
  o.pinned_memory = true;
  EXPECT_THROW(Loader(tokens, o), std::invalid_argument);
}

}  // namespace
}  // namespace stepwise::bench
