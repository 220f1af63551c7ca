// One process, and the ranks of a data-parallel run: how each agrees, and what each records.
#include "bench/measure/ranks.h"

#include "bench/measure/runner.h"
#include "bench/stats.h"

#include <algorithm>

namespace stepwise::bench {

namespace {

class SingleProcess final : public Ranks {
 public:
  bool alone() const override { return true; }
  bool any(bool mine) override { return mine; }
  std::function<at::Tensor(at::Tensor)> loss_reduction() const override { return nullptr; }
  void record(const TrainState&, const Step&, const RunConfig&, const std::vector<double>&, RunResult&) override {}
  void account(const TrainState&, MemoryStats&) const override {}
};

class DataParallelRanks final : public Ranks {
 public:
  explicit DataParallelRanks(std::shared_ptr<Collectives> collectives) : collectives_(std::move(collectives)) {}

  bool alone() const override { return false; }
  bool any(bool mine) override { return collectives_->any(mine); }

  // The loss of the global batch, the mean over ranks, so every rank sees (and judges) the same value.
  std::function<at::Tensor(at::Tensor)> loss_reduction() const override {
    return [collectives = collectives_](at::Tensor stacked) {
      Collectives::wait(collectives->all_reduce_sum_async(stacked));
      return stacked.div_(collectives->world_size());
    };
  }

  // A step's time is its slowest rank's (the all-reduce couples them); each rank's median is kept beside it.
  void record(const TrainState& state, const Step& step, const RunConfig& config, const std::vector<double>& times,
              RunResult& result) override {
    const auto per_rank = collectives_->all_gather(times);
    std::vector<double> medians;
    for (const auto& t : per_rank) medians.push_back(summarize(t).median);
    for (size_t i = 0; i < result.steps.size(); ++i)
      for (const auto& t : per_rank) result.steps[i].ms = std::max(result.steps[i].ms, t.at(i));
    const auto slowest = std::max_element(medians.begin(), medians.end()) - medians.begin();
    result.world_size = collectives_->world_size();
    result.distributed = {{"world_size", collectives_->world_size()},
                          {"backend", collectives_->backend()},
                          {"rank_step_ms_median", medians},
                          {"slowest_rank", slowest},
                          {"tokens_per_step_per_rank", config.batch_size * config.seq_len},
                          {"allreduce", step.allreduce()}};
    auto& d = result.distributed;
    // Summing phases over ranks would mix different steps' waits: the phases stay this rank's own.
    result.phase_note = (result.phase_note ? *result.phase_note + "; " : std::string()) +
                        "data parallel: the phases are the writing rank's (rank 0), while a step's time is the "
                        "slowest rank's; comm is the gradient exchange as this rank's compute stream waited for it "
                        "(of the bucketed all-reduce, what backward did not hide)";
    if (const auto* zero1 = state.zero1()) {
      // No buckets: the sharded optimizer reduce-scatters the whole flat gradient in its step. compile's step
      // describes only its captured bucketed all-reduce (compile.h), so the exchange is the optimizer's own account.
      d["allreduce"] = zero1->exchange();
      d["optimizer"] = "zero1";
      d["reduce_scatter"] = zero1->reduce_scatter_method();
      d["optimizer_state_bytes_per_rank"] = zero1->state_bytes();
      d["optimizer_state_bytes_replicated"] = zero1->replicated_state_bytes();
      d["zero1_buffer_bytes"] = zero1->buffer_bytes();
    } else {
      d["bucket_bytes"] = state.grad_sync->bucket_bytes();
      d["bucket_count"] = state.grad_sync->bucket_count();
    }
  }

  // split_peak counts the whole AdamW state on every rank; zero1 holds its shard's moments and, besides them, its
  // flat buffer and shards, which the activations (the peak's remainder) must not absorb.
  void account(const TrainState& state, MemoryStats& m) const override {
    const auto* zero1 = state.zero1();
    if (!zero1) return;
    const int64_t replicated = m.optimizer_state_bytes.value_or(0);
    m.optimizer_state_bytes = zero1->state_bytes();
    if (m.activation_bytes)
      m.activation_bytes =
          std::max<int64_t>(0, *m.activation_bytes + replicated - zero1->state_bytes() - zero1->buffer_bytes());
  }

 private:
  std::shared_ptr<Collectives> collectives_;
};

}  // namespace

std::unique_ptr<Ranks> make_ranks(std::shared_ptr<Collectives> collectives) {
  if (!collectives) return std::make_unique<SingleProcess>();
  return std::make_unique<DataParallelRanks>(std::move(collectives));
}

}  // namespace stepwise::bench
