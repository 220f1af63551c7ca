// CudaGraphStep: static buffers, warm-up and capture on one side stream, replay on the compute stream.
#include "bench/cuda_graph_step.h"

#include "bench/oom.h"
#include "bench/train_step.h"

#ifdef STEPWISE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#endif

#include <ATen/ATen.h>

#include <optional>
#include <stdexcept>

namespace stepwise::bench {

#ifdef STEPWISE_WITH_CUDA

struct CudaGraphStep::Impl {
  TrainState& state;
  at::Tensor static_x, static_y;  // (B, T): every batch is copied in here, because the graph reads fixed addresses
  at::Tensor static_loss;         // written by each replay
  c10::cuda::CUDAStream side;     // warm-up and capture: backward's leaf streams must match the capture's
  std::unique_ptr<at::cuda::CUDAGraph> graph;
  int eager_steps = 0;

  explicit Impl(TrainState& s)
      : state(s), side(at::cuda::getStreamFromPool(/*isHighPriority=*/false, s.device.index())) {}

  // Runs `work` on the side stream, ordered after and before the compute stream's own work.
  template <typename F>
  void on_side_stream(F&& work) {
    auto compute = at::cuda::getCurrentCUDAStream(state.device.index());
    at::cuda::CUDAEvent ready, done;
    ready.record(compute);
    ready.block(side);
    {
      c10::cuda::CUDAStreamGuard guard(side);
      work();
    }
    done.record(side);
    done.block(compute);
  }

  void capture() {
    graph = std::make_unique<at::cuda::CUDAGraph>();
    // Gradients set to none so backward allocates them inside the graph's pool; each replay then rewrites them.
    state.optimizer->zero_grad();
    try {
      // Thread-local mode: the loader's staging thread may call CUDA (event waits) while this thread captures.
      graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
      static_loss = forward_backward_update(state, static_x, static_y, /*autocast_cache=*/false);
      graph->capture_end();
    } catch (const std::exception& e) {
      graph.reset();
      throw std::runtime_error("CUDA graph capture of the training step failed: " + short_message(e));
    }
  }

  at::Tensor step() {
    DeviceBatch batch = state.loader->next();  // H2D per the copy mode (the copy stream when pinned async)
    static_x.copy_(batch.x, /*non_blocking=*/true);
    static_y.copy_(batch.y, /*non_blocking=*/true);
    if (graph) {
      graph->replay();
      return static_loss.clone();  // the runner keeps each step's loss; the static one is overwritten next replay
    }
    bool captured = false;
    on_side_stream([&] {
      if (eager_steps < kEagerWarmupSteps) {
        static_loss = forward_backward_update(state, static_x, static_y);
        state.optimizer->zero_grad();
        ++eager_steps;
      } else {
        capture();
        captured = true;
      }
    });
    if (captured) graph->replay();  // capturing records the step without running it
    return static_loss.clone();
  }
};

CudaGraphStep::CudaGraphStep(TrainState& state) {
  if (!state.device.is_cuda()) throw std::runtime_error("compile (CUDA graph) requires a CUDA device");
  if (!state.optimizer->capturable())
    throw std::runtime_error("compile (CUDA graph): the " + state.optimizer->name() + " AdamW cannot be captured");
  impl_ = std::make_unique<Impl>(state);
  const auto& o = state.loader->options();
  auto index = at::TensorOptions().dtype(at::kLong).device(state.device);
  impl_->static_x = at::zeros({o.batch_size, o.seq_len}, index);
  impl_->static_y = at::zeros({o.batch_size, o.seq_len}, index);
}

at::Tensor CudaGraphStep::operator()() { return impl_->step(); }

#else

struct CudaGraphStep::Impl {};

CudaGraphStep::CudaGraphStep(TrainState&) {
  throw std::runtime_error("compile (CUDA graph) requires a CUDA build of stepwise");
}

at::Tensor CudaGraphStep::operator()() { return {}; }

#endif

CudaGraphStep::~CudaGraphStep() = default;

}  // namespace stepwise::bench
