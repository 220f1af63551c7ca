// Data parallel on c10d's Gloo backend, two ranks as threads on loopback: each on half of every batch, they end
// with the same parameters as one process on the whole batch, with AdamW and with the muon flag's optimizer; and the
// bucketing itself.
#include "bench/distributed/grad_sync.h"
#include "ablations/command_line/launcher.h"
#include "bench/distributed/collectives.h"
#include "bench/optim/adamw.h"
#include "bench/optim/muon.h"
#include "bench/step/train_state.h"
#include "model/gpt.h"
#include "model/weights.h"
#include "tests/support.h"

#include <torch/utils.h>

#include <gtest/gtest.h>

#include <set>
#include <thread>

namespace stepwise::bench {
namespace {

constexpr int kSteps = 3;
constexpr int64_t kBatch = 4, kSeq = 16;
constexpr auto kTimeout = std::chrono::seconds(60);

using testing::Batches;
constexpr uint64_t kBatchSeed = 7;

Batches make_batches() { return testing::random_batches(kSteps, kBatch, kSeq, kBatchSeed); }

std::unique_ptr<Optimizer> fused_adamw(model::GPT& gpt) {
  return make_adamw(AdamWKind::Fused, gpt->parameters(), AdamWOptions().lr(1e-2));
}

// The muon flag's optimizer as make_train_state builds it (Newton-Schulz batched by shape), in float32 so the
// comparison with one process is not bf16's, and in bf16, the speedrun's.
std::unique_ptr<Optimizer> muon(model::GPT& gpt) {
  return make_muon(AdamWKind::Forloop, gpt->named_parameters(), MuonOptions().ns_dtype(MuonNsDtype::Float32),
                   AdamWOptions().lr(1e-2));
}
std::unique_ptr<Optimizer> muon_bf16(model::GPT& gpt) {
  return make_muon(AdamWKind::Forloop, gpt->named_parameters(), MuonOptions().ns_dtype(MuonNsDtype::Bf16),
                   AdamWOptions().lr(1e-2));
}

using MakeOptimizer = std::unique_ptr<Optimizer> (*)(model::GPT&);

// K steps on rows [begin, end) of every batch, averaging gradients over `collectives` if given.
void train(model::GPT& gpt, const Batches& b, int64_t begin, int64_t end, std::shared_ptr<Collectives> collectives,
           MakeOptimizer make = fused_adamw) {
  auto optimizer = make(gpt);
  std::unique_ptr<GradientSync> sync;
  if (collectives) sync = std::make_unique<GradientSync>(gpt->parameters(), collectives, /*bucket_bytes=*/1 << 20);
  for (int i = 0; i < kSteps; ++i) {
    auto logits = gpt->forward(b.x[i].slice(0, begin, end));
    model::cross_entropy(logits, b.y[i].slice(0, begin, end)).backward();
    if (sync) sync->finish();
    optimizer->step();
    optimizer->zero_grad();
  }
}

// Two Gloo ranks in two threads, each training its model on its half of every batch, the gradients all-reduced.
void train_on_two_gloo_ranks(model::GPT& rank0, model::GPT& rank1, const Batches& batches,
                             MakeOptimizer make = fused_adamw) {
  DistEnv env;
  env.world_size = 2;
  env.master_port = ablations::free_port();
  auto run_rank = [&](int rank, model::GPT& gpt) {
    DistEnv mine = env;
    mine.rank = mine.local_rank = rank;
    auto collectives = std::make_shared<Collectives>(mine, c10::kCPU, kTimeout);
    EXPECT_EQ(collectives->backend(), "gloo");
    train(gpt, batches, rank * kBatch / 2, (rank + 1) * kBatch / 2, collectives, make);
  };
  std::thread t0(run_rank, 0, std::ref(rank0)), t1(run_rank, 1, std::ref(rank1));
  t0.join();
  t1.join();
}

TEST(DataParallel, TwoGlooRanksOnHalfBatchesMatchOneProcessOnTheWholeBatch) {
  const auto config = testing::small_config();  // dropout 0: the same function on every rank
  torch::manual_seed(0);
  model::GPT reference(config), single(config), rank0(config), rank1(config);
  for (auto* m : {&single, &rank0, &rank1}) model::copy_weights(reference, *m);
  const Batches batches = make_batches();
  train(single, batches, 0, kBatch, nullptr);
  train_on_two_gloo_ranks(rank0, rank1, batches);

  const auto expected = single->named_parameters();
  for (auto* gpt : {&rank0, &rank1})
    for (const auto& item : (*gpt)->named_parameters())
      EXPECT_LT(testing::relative_error(item.value(), expected[item.key()]), 1e-5) << item.key();
}

// Muon steps on every rank after the all-reduce: each rank orthogonalises the same averaged gradient, so the ranks'
// weights stay identical to the bit, and equal to one process stepping on the whole batch's gradient (Newton-Schulz
// is smooth, so the all-reduce's other summation order moves them by float32 rounding only; in bf16 that rounding can
// tip a bf16 rounding, so there only the ranks are held to each other).
TEST(DataParallel, MuonOnTwoGlooRanksKeepsTheRanksIdenticalAndMatchesOneProcess) {
  for (const MakeOptimizer make : {muon, muon_bf16}) {
    const bool fp32 = make == muon;
    const auto config = testing::small_config();
    torch::manual_seed(0);
    model::GPT reference(config), single(config), rank0(config), rank1(config);
    for (auto* m : {&single, &rank0, &rank1}) model::copy_weights(reference, *m);
    const Batches batches = make_batches();
    train(single, batches, 0, kBatch, nullptr, make);
    train_on_two_gloo_ranks(rank0, rank1, batches, make);

    const auto expected = single->named_parameters(), other = rank1->named_parameters();
    const auto before = reference->named_parameters();
    size_t moved = 0;
    for (const auto& item : rank0->named_parameters()) {
      EXPECT_TRUE(at::equal(item.value(), other[item.key()])) << item.key() << ": the ranks' weights differ";
      if (fp32) EXPECT_LT(testing::relative_error(item.value(), expected[item.key()]), 1e-4) << item.key();
      moved += !at::equal(item.value(), before[item.key()]);
    }
    EXPECT_EQ(moved, rank0->named_parameters().size()) << "every parameter stepped";
  }
}

TEST(DataParallel, EveryRankDrawsItsOwnDropoutStream) {
  // Rank 0 keeps the single-process stream, so one rank reproduces a single-process run; the others differ.
  EXPECT_EQ(dropout_seed(123, 0), dropout_seed(123));
  std::set<uint64_t> seeds;
  for (int rank = 0; rank < 8; ++rank) seeds.insert(dropout_seed(123, rank));
  EXPECT_EQ(seeds.size(), 8u);
}

TEST(DataParallel, CollectivesAgreeAcrossRanks) {
  DistEnv env;
  env.world_size = 2;
  env.master_port = ablations::free_port();
  std::vector<std::vector<double>> gathered;
  bool any_result = false;
  int64_t min_result = 0;
  auto run_rank = [&](int rank) {
    DistEnv mine = env;
    mine.rank = rank;
    Collectives c(mine, c10::kCPU, kTimeout);
    const bool any = c.any(rank == 1);
    const int64_t min = c.min(10 + rank);
    auto all = c.all_gather({1.0 * rank, 2.0 * rank});
    if (rank == 0) {
      any_result = any;
      min_result = min;
      gathered = all;
    }
  };
  std::thread t0(run_rank, 0), t1(run_rank, 1);
  t0.join();
  t1.join();
  EXPECT_TRUE(any_result);
  EXPECT_EQ(min_result, 10);
  EXPECT_EQ(gathered, (std::vector<std::vector<double>>{{0, 0}, {1, 2}}));
}

TEST(DataParallel, ARankThatNeverJoinsFailsTheRendezvousWithinTheTimeout) {
  DistEnv env;
  env.world_size = 2;
  env.master_port = ablations::free_port();
  const auto began = std::chrono::steady_clock::now();
  try {
    Collectives alone(env, c10::kCPU, std::chrono::seconds(2));
    FAIL() << "rank 0 should not start without rank 1";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not every rank joined"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(30));
}

}  // namespace
}  // namespace stepwise::bench
