// Gradient averaging across ranks in buckets, each all-reduce launched from autograd hooks as soon as its bucket
// is full, so communication overlaps the rest of the backward pass (DDP's design, on c10d's collectives).
#pragma once

#include "bench/distributed/collectives.h"

#include <ATen/core/Tensor.h>

#include <memory>
#include <mutex>
#include <vector>

namespace stepwise::bench {

// DDP's default bucket size.
constexpr size_t kDefaultBucketBytes = size_t{25} << 20;

class GradientSync {
 public:
  // Buckets are filled in reverse parameter order, the order backward produces gradients in.
  GradientSync(std::vector<at::Tensor> params, std::shared_ptr<Collectives> collectives,
               size_t bucket_bytes = kDefaultBucketBytes);
  // After backward: launches any bucket that did not fill (unused parameters), waits for all, and writes the
  // averaged gradients into .grad. Then every rank holds identical gradients.
  void finish();

  size_t bucket_bytes() const { return bucket_bytes_; }
  size_t bucket_count() const { return buckets_.size(); }

 private:
  struct Bucket {
    std::vector<size_t> params;  // indices into params_
    std::vector<int64_t> offsets;
    at::Tensor flat;  // (sum of numel) on the parameters' device and dtype
    size_t ready = 0;
    std::shared_ptr<Collectives::Pending> pending;
  };
  void on_gradient(size_t param, const at::Tensor& grad);
  void launch(Bucket& bucket);

  std::vector<at::Tensor> params_;
  std::shared_ptr<Collectives> collectives_;
  size_t bucket_bytes_;
  std::vector<Bucket> buckets_;
  std::vector<std::pair<size_t, size_t>> where_;  // param -> (bucket, slot)
  std::mutex mutex_;
};

}  // namespace stepwise::bench
