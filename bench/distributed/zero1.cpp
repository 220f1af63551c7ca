// Zero1AdamW: the parameters flattened into one buffer of world_size equal shards, c10d's reduce-scatter and
// all-gather around an unchanged AdamW (bench/optim/) that steps one flat shard. AdamW is elementwise and weight
// decay applies to every parameter here, so stepping a flat shard computes what stepping the whole model would.
#include "bench/distributed/zero1.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <stdexcept>

namespace stepwise::bench {

namespace {

// The two moments, exp_avg and exp_avg_sq, each the size of what they step (every AdamW in bench/optim/).
constexpr int64_t kMomentsPerElement = 2;

// One dtype and one device for all: the flat buffer has a single element type.
void check_uniform(const std::vector<at::Tensor>& params) {
  if (params.empty()) throw std::runtime_error("zero1: AdamW needs at least one parameter");
  const auto& first = params.front();
  for (const auto& p : params)
    if (p.scalar_type() != first.scalar_type() || p.device() != first.device())
      throw std::runtime_error(std::string("zero1: every parameter must have one dtype on one device to share a flat "
                                           "buffer, but ") +
                               c10::toString(first.scalar_type()) + " on " + first.device().str() + " meets " +
                               c10::toString(p.scalar_type()) + " on " + p.device().str());
  if (!at::isFloatingType(first.scalar_type()))
    throw std::runtime_error(std::string("zero1: parameters must be floating point, not ") +
                             c10::toString(first.scalar_type()));
}

}  // namespace

Zero1AdamW::Zero1AdamW(AdamWKind kind, std::vector<at::Tensor> params, const AdamWOptions& options,
                       std::shared_ptr<Collectives> collectives)
    : params_(std::move(params)), collectives_(std::move(collectives)) {
  check_uniform(params_);
  if (!collectives_) throw std::runtime_error("zero1: needs the data-parallel group (Collectives)");
  torch::NoGradGuard no_grad;
  for (const auto& p : params_) numel_ += p.numel();
  const int64_t world = collectives_->world_size(), rank = collectives_->rank();
  shard_numel_ = (numel_ + world - 1) / world;
  const auto opts = at::TensorOptions().dtype(params_.front().scalar_type()).device(params_.front().device());
  flat_ = at::zeros({world * shard_numel_}, opts);  // the padding past numel_ stays zero: zero gradients, zero params
  int64_t offset = 0;
  for (const auto& p : params_) {
    flat_.slice(0, offset, offset + p.numel()).copy_(p.reshape(-1));
    offset += p.numel();
  }
  // Its own storage, not a view of flat_: flat_ carries the next step's gradients over it.
  shard_param_ = flat_.slice(0, rank * shard_numel_, (rank + 1) * shard_numel_).clone().requires_grad_(true);
  shard_grad_ = at::zeros({shard_numel_}, opts);
  inner_ = make_adamw(kind, {shard_param_}, options);
}

void Zero1AdamW::step() {
  torch::NoGradGuard no_grad;
  mark(marks_, Phase::Optimizer);  // what ran since backward (the schedule's rate) is the optimizer's
  // (a) Every gradient into the flat buffer, in parameter order: (world_size * shard_numel_).
  int64_t offset = 0;
  for (const auto& p : params_) {
    auto slot = flat_.slice(0, offset, offset + p.numel());
    if (p.grad().defined())
      slot.copy_(p.grad().reshape(-1));
    else
      slot.zero_();
    offset += p.numel();
  }
  flat_.slice(0, numel_).zero_();  // the last shard's padding: zero gradients keep its parameters and moments at zero
  // (b) This rank's shard of the sum over ranks, averaged as GradientSync averages: (shard_numel_).
  Collectives::wait(collectives_->reduce_scatter_sum_async(shard_grad_, flat_));
  mark(marks_, Phase::Comm);  // (a) and (b): the gradients' exchange, as the compute stream waits for it
  shard_grad_.div_(static_cast<double>(collectives_->world_size()));
  // (c) AdamW on the shard only: its moments are the only optimizer state this rank holds.
  shard_param_.mutable_grad() = shard_grad_;
  inner_->step();
  mark(marks_, Phase::Optimizer);
  // (d) Every rank's updated shard into flat_, then back into the model's parameters.
  Collectives::wait(collectives_->all_gather_into_async(flat_, shard_param_));
  offset = 0;
  for (auto& p : params_) {
    p.copy_(flat_.slice(0, offset, offset + p.numel()).view_as(p));
    offset += p.numel();
  }
  mark(marks_, Phase::Comm);  // (d): the parameters' exchange
}

void Zero1AdamW::zero_grad() {
  for (auto& p : params_) p.mutable_grad().reset();
  inner_->zero_grad();
}

int64_t Zero1AdamW::state_bytes() const {
  return kMomentsPerElement * shard_numel_ * static_cast<int64_t>(shard_param_.element_size());
}

int64_t Zero1AdamW::replicated_state_bytes() const {
  return kMomentsPerElement * numel_ * static_cast<int64_t>(shard_param_.element_size());
}

int64_t Zero1AdamW::buffer_bytes() const {
  return static_cast<int64_t>(flat_.nbytes() + shard_param_.nbytes() + shard_grad_.nbytes());
}

std::string Zero1AdamW::exchange() const {
  return "none during backward: the optimizer step reduce-scatters the flat gradients, steps AdamW on this rank's "
         "shard and all-gathers the parameters, eagerly after backward (outside compile's CUDA graph)";
}

}  // namespace stepwise::bench
