// zero1 on c10d's Gloo backend, ranks as threads on loopback: AdamW sharded across the ranks ends with the same
// parameters as DDP's path (GradientSync's all-reduce, then the whole model's AdamW), for every AdamW kind; every rank
// ends with the same parameters; and each rank holds 1/world_size of the optimizer state.
#include "bench/distributed/zero1.h"
#include "ablations/command_line/launcher.h"
#include "bench/distributed/collectives.h"
#include "bench/distributed/grad_sync.h"
#include "bench/optim/adamw.h"
#include "model/gpt.h"
#include "model/weights.h"
#include "tests/support.h"

#include <torch/utils.h>

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <thread>
#include <vector>

namespace stepwise::bench {
namespace {

constexpr int kSteps = 4;
constexpr int64_t kBatch = 6, kSeq = 16;  // 6 rows: an equal share for 2 and for 3 ranks
constexpr auto kTimeout = std::chrono::seconds(60);
// eps near the gradients' size, so AdamW sees their scale: with torch's 1e-8, m / (sqrt(v) + eps) is blind to a
// factor in the gradients, and a rank that summed without averaging would step as one that averaged.
const AdamWOptions kOptions = AdamWOptions().lr(1e-2).eps(1e-3);
// Two ranks: both paths sum the same two gradients (a sum of two terms is the same in either order) and divide by
// the same world size, then run the same elementwise AdamW ops; a shard only starts the kernels' vector lanes at
// other offsets, which could at most change an op's last bit on another CPU. Measured here: 0, the paths agree
// bitwise for every kind (a rank that skips the average is off by about 1e-2).
constexpr testing::Tolerance kSameOps{1e-6, 1e-7};
// bf16 (pure), two ranks: the same ops in bf16 (measured: 0); one bf16 ulp of a weight (2^-8 relative) at most.
constexpr testing::Tolerance kSameOpsBf16{4e-3, 1e-4};
// Three ranks: Gloo sums three gradients in an order that depends on the buffer (DDP's 1 MiB buckets, zero1's one
// flat buffer), so the last bit of a gradient may differ and AdamW carries it through kSteps steps. Measured here: at
// most 2.4e-7 on any weight, under this atol alone by 4x.
constexpr testing::Tolerance kSumOrder{1e-5, 1e-6};

using testing::Batches;
constexpr uint64_t kBatchSeed = 7;

Batches make_batches() { return testing::random_batches(kSteps, kBatch, kSeq, kBatchSeed); }

enum class Exchange {
  Ddp,    // GradientSync's bucketed all-reduce, then make_adamw over every parameter
  Zero1,  // Zero1AdamW: reduce-scatter, AdamW on the shard, all-gather
};

struct RankResult {
  std::vector<at::Tensor> params;  // after kSteps, in parameters() order
  std::string name;
  int64_t state_bytes = 0, replicated_state_bytes = 0;
  std::string error;  // what the rank threw, if it did
};

// kSteps steps on `world` ranks, each on its kBatch / world rows of every batch, all starting from one model.
std::vector<RankResult> train_ranks(int world, Exchange exchange, AdamWKind kind, at::ScalarType dtype = at::kFloat) {
  const Batches batches = make_batches();
  const auto config = testing::small_config();  // dropout 0: the same function on every rank
  torch::manual_seed(0);
  model::GPT reference(config);
  std::vector<model::GPT> models;
  for (int r = 0; r < world; ++r) {
    models.emplace_back(config);
    model::copy_weights(reference, models.back());
    models.back()->to(dtype);
  }
  DistEnv env;
  env.world_size = world;
  env.master_port = ablations::free_port();
  std::vector<RankResult> results(world);
  auto run_rank = [&](int rank) {
    try {
      DistEnv mine = env;
      mine.rank = mine.local_rank = rank;
      auto collectives = std::make_shared<Collectives>(mine, c10::kCPU, kTimeout);
      auto& gpt = models[rank];
      std::unique_ptr<AdamW> optimizer;
      std::unique_ptr<GradientSync> sync;
      if (exchange == Exchange::Zero1) {
        optimizer = std::make_unique<Zero1AdamW>(kind, gpt->parameters(), kOptions, collectives);
      } else {
        optimizer = make_adamw(kind, gpt->parameters(), kOptions);
        sync = std::make_unique<GradientSync>(gpt->parameters(), collectives, /*bucket_bytes=*/1 << 20);
      }
      const int64_t rows = kBatch / world;
      for (int i = 0; i < kSteps; ++i) {
        auto logits = gpt->forward(batches.x[i].slice(0, rank * rows, (rank + 1) * rows));
        model::cross_entropy(logits, batches.y[i].slice(0, rank * rows, (rank + 1) * rows)).backward();
        if (sync) sync->finish();
        optimizer->step();
        optimizer->zero_grad();
      }
      auto& out = results[rank];
      for (const auto& p : gpt->parameters()) out.params.push_back(p.detach().clone());
      out.name = optimizer->name();
      if (const auto* zero1 = dynamic_cast<const Zero1AdamW*>(optimizer.get())) {
        out.state_bytes = zero1->state_bytes();
        out.replicated_state_bytes = zero1->replicated_state_bytes();
      }
    } catch (const std::exception& e) {
      results[rank].error = e.what();
    }
  };
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) threads.emplace_back(run_rank, r);
  for (auto& t : threads) t.join();
  for (const auto& r : results) EXPECT_EQ(r.error, "");
  return results;
}

void expect_same_parameters(const std::vector<RankResult>& actual, const std::vector<RankResult>& expected,
                            testing::Tolerance tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t r = 0; r < actual.size(); ++r) {
    ASSERT_EQ(actual[r].params.size(), expected[r].params.size()) << "rank " << r;
    for (size_t i = 0; i < actual[r].params.size(); ++i)
      EXPECT_TRUE(testing::all_close(actual[r].params[i], expected[r].params[i], tolerance))
          << "rank " << r << ", parameter " << i;
  }
}

// Every rank holds bitwise the same parameters: the all-gather handed each the others' shards.
void expect_ranks_agree(const std::vector<RankResult>& ranks) {
  for (size_t r = 1; r < ranks.size(); ++r)
    for (size_t i = 0; i < ranks[r].params.size(); ++i)
      EXPECT_TRUE(at::equal(ranks[r].params[i], ranks[0].params[i])) << "rank " << r << ", parameter " << i;
}

// gtest names a failing parameter by this, not by its bytes.
void PrintTo(AdamWKind kind, std::ostream* os) { *os << to_string(kind); }

class Zero1Kinds : public ::testing::TestWithParam<AdamWKind> {};

TEST_P(Zero1Kinds, TwoGlooRanksMatchAllReduceThenAdamW) {
  const auto zero1 = train_ranks(2, Exchange::Zero1, GetParam());
  const auto ddp = train_ranks(2, Exchange::Ddp, GetParam());
  expect_same_parameters(zero1, ddp, kSameOps);
  expect_ranks_agree(zero1);
  EXPECT_EQ(zero1[0].name, "zero1(" + to_string(GetParam()) + ")");
}

INSTANTIATE_TEST_SUITE_P(Zero1, Zero1Kinds, ::testing::Values(AdamWKind::Fused, AdamWKind::Forloop, AdamWKind::Foreach),
                         [](const auto& info) { return to_string(info.param); });

TEST(Zero1, PureBf16RanksMatchAllReduceThenAdamW) {
  const auto zero1 = train_ranks(2, Exchange::Zero1, AdamWKind::Fused, at::kBFloat16);
  const auto ddp = train_ranks(2, Exchange::Ddp, AdamWKind::Fused, at::kBFloat16);
  expect_same_parameters(zero1, ddp, kSameOpsBf16);
  expect_ranks_agree(zero1);
  EXPECT_EQ(zero1[0].state_bytes * 2, zero1[0].replicated_state_bytes);  // bf16 moments: 2 bytes each
}

TEST(Zero1, EachRankHoldsItsShareOfTheOptimizerState) {
  // Three ranks: the small model's parameter count is not a multiple of 3, so the last shard is padded.
  constexpr int kWorld = 3;
  const auto zero1 = train_ranks(kWorld, Exchange::Zero1, AdamWKind::Fused);
  const auto ddp = train_ranks(kWorld, Exchange::Ddp, AdamWKind::Fused);
  expect_same_parameters(zero1, ddp, kSumOrder);  // the padding never leaks into the parameters
  expect_ranks_agree(zero1);
  int64_t numel = 0;
  for (const auto& p : ddp[0].params) numel += p.numel();
  ASSERT_NE(numel % kWorld, 0) << "the test means to exercise the padding";
  constexpr int64_t kMomentBytes = 2 * sizeof(float);  // exp_avg and exp_avg_sq, fp32
  for (const auto& rank : zero1) {
    EXPECT_EQ(rank.replicated_state_bytes, kMomentBytes * numel);
    EXPECT_EQ(rank.state_bytes, kMomentBytes * ((numel + kWorld - 1) / kWorld));
    // 1/world_size of the replicated state, give or take the padding (fewer than world_size elements).
    EXPECT_GE(rank.state_bytes * kWorld, rank.replicated_state_bytes);
    EXPECT_LT(rank.state_bytes * kWorld - rank.replicated_state_bytes, kMomentBytes * kWorld);
  }
}

TEST(Zero1, ParametersOfMixedDtypesAreRefused) {
  std::vector<at::Tensor> params{at::zeros({4}), at::zeros({4}, at::kBFloat16)};
  try {
    Zero1AdamW optimizer(AdamWKind::Fused, params, kOptions, nullptr);
    FAIL() << "mixed dtypes should not share a flat buffer";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("one dtype"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace stepwise::bench
