// The compile flag: the whole training step — forward, loss, backward, optimizer — captured once as a CUDA graph
// and replayed every step, the mechanism behind torch.compile's "reduce-overhead" mode. LibTorch has no
// torch.compile for training (no Inductor from C++), so this is what "compile" means here: it removes launch
// overhead and host work, but fuses no kernels.
#pragma once

#include "bench/train_state.h"

#include <ATen/core/Tensor.h>

#include <memory>

namespace stepwise::bench {

class CudaGraphStep {
 public:
  // Eager steps run on the capture's side stream before capturing: they create the optimizer state and the
  // cuBLAS/cuDNN workspaces a capture must not allocate for the first time.
  static constexpr int kEagerWarmupSteps = 3;

  // Throws std::runtime_error unless the device is CUDA and the optimizer is capturable.
  explicit CudaGraphStep(TrainState& state);
  ~CudaGraphStep();
  // The next batch copied into the static inputs, then an eager warm-up step, the capture (followed by its first
  // replay), or a replay. Returns a copy of the static loss, on the device. A failed capture throws
  // std::runtime_error with CUDA's reason; there is no eager fallback.
  at::Tensor operator()();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace stepwise::bench
