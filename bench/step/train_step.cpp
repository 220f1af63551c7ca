// The eager step everything is measured on, top to bottom: batch -> copy -> forward -> loss -> backward -> optimizer.
// It holds no host synchronisation of its own; the runner puts the events around it.
#include "bench/step/train_step.h"

#include "bench/memory.h"
#include "bench/step/bf16.h"
#include "bench/step/compile.h"
#include "model/gpt.h"

namespace stepwise::bench {

at::Tensor forward_backward(TrainState& state, const at::Tensor& x, const at::Tensor& y, PhaseMarks* marks,
                            bool autocast_cache) {
  at::Tensor loss;
  {
    AutocastGuard autocast(state.device.type(), state.bf16_autocast, c10::kBFloat16, autocast_cache);
    loss = state.model->loss(x, y);  // forward, head and cross-entropy (chunked with chunked_ce): a scalar
  }
  mark(marks, Phase::Forward);
  // Seeded as Python's torch.autograd.backward seeds it: ones_like(loss, preserve_format), one aten::empty_strided.
  // C++'s loss.backward() makes its own seed through aten::empty (a contiguous ones_like): the same 4 bytes by
  // another op, the one count --count-ops still found apart in every row.
  loss.backward(at::ones_like(loss, at::MemoryFormat::Preserve));
  mark(marks, Phase::Backward);
  if (state.grad_sync) {
    state.grad_sync->finish();  // data parallel: wait for the bucketed all-reduces
    mark(marks, Phase::Comm);   // what of them backward did not hide, as the compute stream sees it
  }
  return loss.detach();
}

namespace {

class EagerStep final : public Step {
 public:
  explicit EagerStep(TrainState& state) : state_(state) {}

  at::Tensor operator()() override {
    DeviceBatch batch = state_.loader->next();  // staged by the loader thread; pinned and async with pinned_memory
    mark(state_.phases, Phase::Batch);
    at::Tensor loss = forward_backward(state_, batch.x, batch.y, state_.phases);  // marks forward, backward, comm
    optimizer_step(state_);  // zero1: marks its reduce-scatter and all-gather as comm
    state_.optimizer->zero_grad();
    mark(state_.phases, Phase::Optimizer);
    return loss;
  }

  void time_phases(PhaseMarks* marks) override { bench::time_phases(state_, marks); }

  void measure_activations() override {
    DeviceBatch batch = state_.loader->next();
    open_forward_backward(state_.device);  // forward and backward's own peak (bench/memory.h), without AdamW's
    forward_backward(state_, batch.x, batch.y, /*marks=*/nullptr);
    close_forward_backward(state_.device);
    state_.optimizer->zero_grad();  // no optimizer step: the weights stay as the measured steps left them
  }

  // The first step allocates the optimizer state, the second runs at the steady-state footprint.
  int probe_steps() const override { return 2; }
  std::string memory_scope() const override { return "the measured steps"; }
  std::string allreduce() const override {
    if (const auto* zero1 = state_.zero1()) return zero1->exchange();
    return "bucketed, launched from autograd hooks during backward, awaited before the optimizer step";
  }

 private:
  TrainState& state_;
};

}  // namespace

std::unique_ptr<Step> make_step(TrainState& state, const RunConfig& config) {
  if (config.compile) return std::make_unique<CudaGraphStep>(state);
  return std::make_unique<EagerStep>(state);
}

}  // namespace stepwise::bench
