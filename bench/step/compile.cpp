// compile: CudaGraphStep's static buffers, warm-up and capture on the graph stream, replay on the compute stream.
#include "bench/step/compile.h"

#include "bench/device.h"
#include "bench/memory.h"
#include "bench/oom.h"
#include "bench/step/train_step.h"

#ifdef STEPWISE_WITH_CUDA
#include <ATen/core/CachingHostAllocator.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#endif

#include <ATen/ATen.h>

#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

namespace stepwise::bench {

#ifdef STEPWISE_WITH_CUDA

namespace {

// A CUDAGraph whose failed capture can be abandoned. When the captured code throws, capture_end()'s clean-up never
// runs: the allocator would keep routing this thread's allocations to the graph's pool and the RNG would stay in
// capture mode, failing every configuration after this one. abandon() ends the capture as capture_end() would.
struct AbandonableGraph : at::cuda::CUDAGraph {
  void abandon() noexcept {
    try {
      capture_end();  // a capture still active (a host-side throw such as out of memory) ends with full clean-up
      return;
    } catch (...) {
    }
    if (capture_ended_) return;  // instantiation failed after the clean-up; reset() releases the pool
    // cudaStreamEndCapture failed (an invalidated capture): undo what capture_begin set up.
    try {
      c10::cuda::CUDACachingAllocator::endAllocateToPool(capture_dev_, mempool_id_);
      c10::cuda::CUDACachingAllocator::releasePool(capture_dev_, mempool_id_);
    } catch (...) {
    }
    try {
      at::getHostAllocator(at::kCUDA)->end_allocate_to_pool(mempool_id_);
      at::getHostAllocator(at::kCUDA)->release_pool(mempool_id_);
    } catch (...) {
    }
    for (auto& [generator, increment] : captured_generator_states_) generator->capturing_ = false;
    (void)cudaGetLastError();
  }
};

}  // namespace

struct CudaGraphStep::Impl {
  TrainState& state;
  at::Tensor static_x, static_y;  // (B, T): every batch is copied in here, because the graph reads fixed addresses
  at::Tensor static_loss;         // written by each replay
  c10::cuda::CUDAStream side;     // warm-up and capture: backward's leaf streams must match the capture's
  std::unique_ptr<AbandonableGraph> graph;
  int eager_steps = 0;

  explicit Impl(TrainState& s) : state(s), side(c10::cuda::CUDAStream(dedicated_stream(StreamRole::Graph, s.device))) {}

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
    // Gradients set to none so backward allocates them inside the graph's pool; each replay then rewrites them in
    // place (and the optimizer reads them there), which is why the replayed step never calls zero_grad.
    state.optimizer->zero_grad();
    // As torch.cuda.graph does: a capture cannot reclaim the blocks the eager warm-up cached, so they go back first.
    c10::cuda::device_synchronize();
    c10::cuda::CUDACachingAllocator::emptyCache();
    // From here the peak covers the activations, which the capture allocates once in the graph's private pool and no
    // replay allocates again.
    reset_peak_memory(state.device);
    graph = std::make_unique<AbandonableGraph>();
    try {
      // Thread-local mode: the loader's staging thread may call CUDA (event waits) while this thread captures.
      graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
      static_loss = forward_backward(state, static_x, static_y, /*marks=*/nullptr, /*autocast_cache=*/false);
      graph->capture_end();
    } catch (const std::exception& e) {
      const auto reason = short_message(e);
      graph->abandon();
      graph.reset();
      throw std::runtime_error("CUDA graph capture of forward and backward failed: " + reason);
    }
  }

  at::Tensor step() {
    DeviceBatch batch = state.loader->next();  // H2D per the copy mode (the copy stream when pinned async)
    static_x.copy_(batch.x, /*non_blocking=*/true);
    static_y.copy_(batch.y, /*non_blocking=*/true);
    mark(state.phases, Phase::Batch);
    if (!graph) {
      bool captured = false;
      on_side_stream([&] {
        if (eager_steps < kEagerWarmupSteps) {
          static_loss = forward_backward(state, static_x, static_y, /*marks=*/nullptr);  // warm-up, side stream
          optimizer_step(state);
          state.optimizer->zero_grad();
          ++eager_steps;
        } else {
          capture();
          captured = true;
        }
      });
      if (!captured) return static_loss.clone();
    }
    graph->replay();  // after a capture too: capturing records the step without running it
    mark(state.phases, Phase::ForwardBackward);
    // Eager, outside the graph: with zero1 this is where every collective runs (reduce-scatter, all-gather), so none
    // is captured; the captured forward_backward then has no grad_sync and so no all-reduce either.
    optimizer_step(state);
    mark(state.phases, Phase::Optimizer);
    return static_loss.clone();  // the runner keeps each step's loss; the static one is overwritten next replay
  }
};

CudaGraphStep::CudaGraphStep(TrainState& state) {
  if (!state.device.is_cuda()) throw std::runtime_error("compile (CUDA graph) requires a CUDA device");
  // Blocking wait makes NCCL's wait() poll the host, which is illegal inside a capture. (zero1 has no grad_sync: its
  // collectives run in the eager optimizer step, where blocking wait is harmless.)
  if (const char* blocking = std::getenv("TORCH_NCCL_BLOCKING_WAIT");
      state.grad_sync && blocking && std::string(blocking) == "1")
    throw std::runtime_error(
        "compile (CUDA graph): the all-reduce is captured, which TORCH_NCCL_BLOCKING_WAIT=1 "
        "forbids (wait() polls the host); unset it");
  impl_ = std::make_unique<Impl>(state);
  const auto& loader = *state.loader;
  auto index = at::TensorOptions().dtype(at::kLong).device(state.device);
  impl_->static_x = at::zeros({loader.batch_size(), loader.seq_len()}, index);  // (B, T)
  impl_->static_y = at::zeros({loader.batch_size(), loader.seq_len()}, index);
}

at::Tensor CudaGraphStep::operator()() { return impl_->step(); }

void CudaGraphStep::time_phases(PhaseMarks* marks) { bench::time_phases(impl_->state, marks); }

#else

struct CudaGraphStep::Impl {};

CudaGraphStep::CudaGraphStep(TrainState&) {
  throw std::runtime_error("compile (CUDA graph) requires a CUDA build of stepwise");
}

at::Tensor CudaGraphStep::operator()() { return {}; }

void CudaGraphStep::time_phases(PhaseMarks*) {}

#endif

CudaGraphStep::~CudaGraphStep() = default;

// An event recorded inside the capture becomes one node of the graph, the same event object at every replay, so a
// replay queued behind a chunk overwrites its time before the lagged read-back gets to it; events between phases
// need the host between them, which a replay does not give back.
std::optional<std::string> CudaGraphStep::phase_note() const {
  return "compile replays forward and backward (with the data-parallel all-reduce, when captured) as one CUDA graph: "
         "their split is forward_backward, since an event captured in the graph is one event for every replay and "
         "the lagged read-back would read a later replay's time";
}

}  // namespace stepwise::bench
