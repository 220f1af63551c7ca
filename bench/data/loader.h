// The batch loader: a background thread stages batches in host buffers; next() copies one to the device.
#pragma once

#include "bench/data/sampler.h"
#include "bench/data/tokens.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace stepwise::bench {

// How the host-to-device copy happens.
enum class CopyMode {
  Pageable,        // pageable host memory, blocking copy: the reference (00_orig.py)
  PinnedBlocking,  // pinned host memory, blocking copy: Raschka's step 4, which measured no gain
  PinnedAsync,     // pinned host memory, non_blocking copy on a copy stream that overlaps compute
};
std::string to_string(CopyMode m);

struct DeviceBatch {
  at::Tensor x;  // (B, T) int64 inputs
  at::Tensor y;  // (B, T) int64 targets: x shifted by one
};

struct LoaderOptions {
  int64_t batch_size = 8;
  int64_t seq_len = 1024;
  uint64_t seed = 123;
  CopyMode copy_mode = CopyMode::Pageable;
  c10::Device device = c10::kCPU;
  int rank = 0, world = 1;
  // Host buffers in flight; like DataLoader workers, the thread stays this far ahead of the step.
  size_t prefetch = 4;
};

class Loader {
 public:
  Loader(std::shared_ptr<const Tokens> tokens, const LoaderOptions& options);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // The next batch on the device. On CUDA with PinnedAsync the copy is queued on the copy stream and the
  // current stream waits for it; nothing here blocks the host except waiting for the staging thread.
  DeviceBatch next();

  const LoaderOptions& options() const { return options_; }

 private:
  struct Slot;
  void produce();
  DeviceBatch copy_to_device(Slot& slot);

  std::shared_ptr<const Tokens> tokens_;
  LoaderOptions options_;
  BatchSampler sampler_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::deque<size_t> ready_, free_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_ = false;
  std::exception_ptr error_;
  struct CudaState;
  std::unique_ptr<CudaState> cuda_;
  std::thread thread_;
};

}  // namespace stepwise::bench
