// The batch loader: a background thread stages batches in host buffers, as DataLoader's workers do, and next()
// copies one to the device: pageable and blocking (the reference), or pinned_memory's pinned buffers.
#pragma once

#include "bench/data/sampler.h"
#include "bench/run_config.h"
#include "bench/tokens.h"

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

struct DeviceBatch {
  at::Tensor x;  // (B, T) int64 inputs
  at::Tensor y;  // (B, T) int64 targets: x shifted by one
};

class Loader {
 public:
  // Batches of config.batch_size x config.seq_len on config.device, in the seed's order; with pinned_memory, staged in
  // pinned host memory and copied per config.pinned_mode. Data parallel: this rank's shard of the windows. `start`:
  // the batches of that order already taken (by the run a budget search's branch continues), skipped.
  Loader(std::shared_ptr<const Tokens> tokens, const RunConfig& config, int rank = 0, int world = 1, int64_t start = 0);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // The next batch on the device. With pinned_memory in async mode the copy is queued on the copy stream and the
  // current stream waits for it; nothing here blocks the host except waiting for the staging thread.
  DeviceBatch next();

  int64_t batch_size() const { return config_.batch_size; }
  int64_t seq_len() const { return config_.seq_len; }
  // The batches of the seed's order handed out so far, `start` included: where a new loader would go on from.
  int64_t taken() const { return taken_; }

 private:
  struct Slot;
  void produce();
  DeviceBatch copy_to_device(Slot& slot);
  bool async_copy() const { return config_.pinned_memory && config_.pinned_mode == PinnedMode::Async; }

  std::shared_ptr<const Tokens> tokens_;
  RunConfig config_;
  BatchSampler sampler_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::deque<size_t> ready_, free_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_ = false;
  std::exception_ptr error_;
  int64_t taken_ = 0;
  struct CudaState;
  std::unique_ptr<CudaState> cuda_;
  std::thread thread_;
};

}  // namespace stepwise::bench
