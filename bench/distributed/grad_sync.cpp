// DDP's gradient averaging without DDP (LibTorch has none): buckets filled from autograd hooks, each all-reduced on
// c10d as soon as it is full, so communication overlaps the rest of the backward pass.
#include "bench/distributed/grad_sync.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

namespace stepwise::bench {

GradientSync::GradientSync(std::vector<at::Tensor> params, std::shared_ptr<Collectives> collectives,
                           size_t bucket_bytes)
    : params_(std::move(params)), collectives_(std::move(collectives)), bucket_bytes_(bucket_bytes) {
  where_.resize(params_.size());
  Bucket current;
  size_t current_bytes = 0;
  auto close = [&] {
    if (current.params.empty()) return;
    int64_t numel = 0;
    for (size_t i : current.params) {
      current.offsets.push_back(numel);
      numel += params_[i].numel();
    }
    current.flat = at::zeros({numel}, params_[current.params.front()].options());
    for (size_t slot = 0; slot < current.params.size(); ++slot) where_[current.params[slot]] = {buckets_.size(), slot};
    buckets_.push_back(std::move(current));
    current = Bucket{};
    current_bytes = 0;
  };
  for (size_t k = params_.size(); k-- > 0;) {
    const auto& p = params_[k];
    const size_t bytes = static_cast<size_t>(p.numel()) * p.element_size();
    if (!current.params.empty() &&
        (current_bytes + bytes > bucket_bytes_ || p.scalar_type() != params_[current.params.front()].scalar_type()))
      close();
    current.params.push_back(k);
    current_bytes += bytes;
  }
  close();
  for (size_t i = 0; i < params_.size(); ++i)
    params_[i].register_hook([this, i](const at::Tensor& grad) {
      on_gradient(i, grad);
      return grad;
    });
}

void GradientSync::on_gradient(size_t param, const at::Tensor& grad) {
  std::lock_guard lock(mutex_);
  auto [b, slot] = where_[param];
  Bucket& bucket = buckets_[b];
  torch::NoGradGuard no_grad;
  bucket.flat.slice(0, bucket.offsets[slot], bucket.offsets[slot] + grad.numel()).copy_(grad.reshape(-1));
  if (++bucket.ready == bucket.params.size()) launch(bucket);
}

void GradientSync::launch(Bucket& bucket) { bucket.pending = collectives_->all_reduce_sum_async(bucket.flat); }

void GradientSync::finish() {
  torch::NoGradGuard no_grad;
  {
    std::lock_guard lock(mutex_);
    for (auto& bucket : buckets_)
      if (!bucket.pending) {
        // A bucket whose parameters got no gradient: zeros, as DDP sends for unused parameters.
        for (size_t slot = 0; slot < bucket.params.size(); ++slot)
          if (!params_[bucket.params[slot]].grad().defined())
            bucket.flat.slice(0, bucket.offsets[slot], bucket.offsets[slot] + params_[bucket.params[slot]].numel())
                .zero_();
        launch(bucket);
      }
  }
  const double world = static_cast<double>(collectives_->world_size());
  for (auto& bucket : buckets_) {
    Collectives::wait(bucket.pending);
    bucket.flat.div_(world);
    for (size_t slot = 0; slot < bucket.params.size(); ++slot) {
      auto& p = params_[bucket.params[slot]];
      auto averaged = bucket.flat.slice(0, bucket.offsets[slot], bucket.offsets[slot] + p.numel()).view_as(p);
      if (p.grad().defined())
        p.mutable_grad().copy_(averaged);
      else
        p.mutable_grad() = averaged.clone();
    }
    bucket.pending.reset();
    bucket.ready = 0;
  }
}

}  // namespace stepwise::bench
