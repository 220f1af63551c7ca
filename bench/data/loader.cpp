// Loader: the staging thread, its host buffers, and pinned_memory's two copy modes beside the reference copy.
#include "bench/data/loader.h"

#include "bench/device.h"

#include <ATen/ATen.h>

#ifdef STEPWISE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include <cstring>
#include <optional>
#include <stdexcept>

namespace stepwise::bench {

namespace {
// Host buffers in flight; like DataLoader workers, the staging thread stays this far ahead of the step.
constexpr size_t kPrefetch = 4;
}  // namespace

struct Loader::Slot {
  at::Tensor x, y;  // (B, T) host staging buffers
#ifdef STEPWISE_WITH_CUDA
  // Recorded on the copy stream after an async copy; the buffer is refilled only once it has completed.
  std::optional<at::cuda::CUDAEvent> copied;
#endif
};

struct Loader::CudaState {
#ifdef STEPWISE_WITH_CUDA
  std::optional<c10::cuda::CUDAStream> copy_stream;
#endif
};

Loader::Loader(std::shared_ptr<const Tokens> tokens, const RunConfig& config, int rank, int world, int64_t start)
    : tokens_(std::move(tokens)),
      config_(config),
      sampler_(tokens_->size(), config.seq_len, config.batch_size, config.seed, rank, world),
      taken_(start),
      cuda_(std::make_unique<CudaState>()) {
  for (int64_t i = 0; i < start; ++i) sampler_.next_batch();  // the order is the seed's: the same batches follow
  if (config.pinned_memory && !config.device.is_cuda())
    throw std::invalid_argument("pinned host memory needs a CUDA device");
  auto host = at::TensorOptions().dtype(at::kLong).pinned_memory(config.pinned_memory);
  for (size_t i = 0; i < kPrefetch; ++i) {
    auto slot = std::make_unique<Slot>();
    slot->x = at::empty({config.batch_size, config.seq_len}, host);
    slot->y = at::empty({config.batch_size, config.seq_len}, host);
    slots_.push_back(std::move(slot));
    free_.push_back(i);
  }
#ifdef STEPWISE_WITH_CUDA
  if (async_copy()) cuda_->copy_stream = c10::cuda::CUDAStream(dedicated_stream(StreamRole::Copy, config.device));
#endif
  thread_ = std::thread([this] { produce(); });
}

Loader::~Loader() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void Loader::produce() {
  try {
#ifdef STEPWISE_WITH_CUDA
    // This thread waits on copy events: on another device than the run's, CUDA would open a context there.
    c10::cuda::OptionalCUDAGuard device_guard;
    if (config_.device.is_cuda()) device_guard.set_index(config_.device.index());
#endif
    const auto T = static_cast<size_t>(config_.seq_len);
    while (true) {
      size_t index;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || !free_.empty(); });
        if (stop_) return;
        index = free_.front();
        free_.pop_front();
      }
      Slot& slot = *slots_[index];
#ifdef STEPWISE_WITH_CUDA
      if (slot.copied) slot.copied->synchronize();  // the previous async copy out of this buffer is done
#endif
      auto* x = slot.x.data_ptr<int64_t>();
      auto* y = slot.y.data_ptr<int64_t>();
      const auto& stream = *tokens_;
      for (size_t start : sampler_.next_batch()) {
        for (size_t t = 0; t < T; ++t) {
          x[t] = stream[start + t];
          y[t] = stream[start + t + 1];
        }
        x += T;
        y += T;
      }
      {
        std::lock_guard lock(mutex_);
        ready_.push_back(index);
      }
      changed_.notify_all();
    }
  } catch (...) {
    std::lock_guard lock(mutex_);
    error_ = std::current_exception();
    changed_.notify_all();
  }
}

DeviceBatch Loader::next() {
  size_t index;
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return error_ || !ready_.empty(); });
    if (error_) std::rethrow_exception(error_);
    index = ready_.front();
    ready_.pop_front();
  }
  ++taken_;
  DeviceBatch batch = copy_to_device(*slots_[index]);
  {
    std::lock_guard lock(mutex_);
    free_.push_back(index);
  }
  changed_.notify_all();
  return batch;
}

DeviceBatch Loader::copy_to_device(Slot& slot) {
  const auto& device = config_.device;
  // CPU: the model reads a private copy, because the staging thread refills the buffer right away.
  if (!device.is_cuda()) return {slot.x.clone(), slot.y.clone()};
#ifdef STEPWISE_WITH_CUDA
  if (async_copy()) {
    auto compute = at::cuda::getCurrentCUDAStream(device.index());
    DeviceBatch batch;
    {
      c10::cuda::CUDAStreamGuard on_copy_stream(*cuda_->copy_stream);
      batch.x = slot.x.to(device, /*non_blocking=*/true);
      batch.y = slot.y.to(device, /*non_blocking=*/true);
    }
    if (!slot.copied) slot.copied.emplace();
    slot.copied->record(*cuda_->copy_stream);
    slot.copied->block(compute);  // compute waits on the device, never the host
    // Allocated on the copy stream, used on the compute stream: keep the allocator from reusing them early.
    batch.x.record_stream(compute);
    batch.y.record_stream(compute);
    return batch;
  }
#endif
  // The reference's `.to(device)` (pageable), or pinned_memory in blocking mode: a blocking copy on the current stream.
  return {slot.x.to(device), slot.y.to(device)};
}

}  // namespace stepwise::bench
