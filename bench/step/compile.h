// The compile flag's whole effect: forward, loss and backward captured once as a CUDA graph and replayed every step,
// the mechanism behind torch.compile's "reduce-overhead" mode; the optimizer steps eagerly after each replay, as it
// does beside torch.compile(model) in Raschka's and Karpathy's scripts, so this row changes nothing but how the model
// runs. LibTorch has no torch.compile for training (no Inductor from C++): this removes launch overhead and host work,
// but fuses no kernels.
#pragma once

#include "bench/step/train_step.h"

#include <ATen/core/Tensor.h>

#include <algorithm>
#include <memory>
#include <string>

namespace stepwise::bench {

class CudaGraphStep final : public Step {
 public:
  // Eager steps run on the capture's side stream before capturing: they create the optimizer state and the
  // cuBLAS/cuDNN workspaces a capture must not allocate for the first time.
  static constexpr int kEagerWarmupSteps = 3;

  // Throws std::runtime_error unless the device is CUDA.
  explicit CudaGraphStep(TrainState& state);
  ~CudaGraphStep() override;
  // The next batch copied into the static inputs, then an eager warm-up step, the capture (followed by its first
  // replay), or a replay; then the optimizer step. Returns a copy of the static loss, on the device. A failed
  // capture throws std::runtime_error with CUDA's reason; there is no eager fallback. The peak-memory window starts
  // just before the capture (bench/memory.h): the activations live in the graph's private pool from then on.
  at::Tensor operator()() override;
  void time_phases(PhaseMarks* marks) override;
  // Forward and backward (and a captured all-reduce) replay as one graph: their phase is forward_backward.
  std::optional<std::string> phase_note() const override;

  // The eager steps and the capture happen inside the warm-up, never inside a measured step.
  int64_t warmup_steps(int64_t requested) const override { return std::max<int64_t>(requested, kEagerWarmupSteps + 1); }
  // The eager steps, the capture, and a replay: the probe runs the step the way the run will.
  int probe_steps() const override { return kEagerWarmupSteps + 2; }
  bool opens_memory_window() const override { return true; }
  std::string memory_scope() const override {
    return "the CUDA graph's capture and the measured steps (the activations live in the graph's private pool, "
           "allocated once at capture)";
  }
  std::string allreduce() const override {
    return "bucketed from autograd hooks, captured inside the CUDA graph with the step";
  }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace stepwise::bench
