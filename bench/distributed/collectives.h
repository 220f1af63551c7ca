// The data-parallel group of this run: c10d's TCPStore rendezvous and its backend (NCCL on CUDA, Gloo on CPU),
// behind the few collectives the engine needs. No home-made collective: every byte moves through c10d.
#pragma once

#include "bench/distributed/dist_env.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace stepwise::bench {

class Collectives {
 public:
  // Rendezvous with every rank within `timeout` (rank 0 serves the store). Throws std::runtime_error with a clear
  // message when the port is taken, a rank does not join, or the backend cannot start.
  Collectives(const DistEnv& env, const c10::Device& device, std::chrono::milliseconds timeout);
  ~Collectives();

  int rank() const { return env_.rank; }
  int world_size() const { return env_.world_size; }
  std::string backend() const;

  // Starts a sum all-reduce of `tensor` in place; wait() blocks (NCCL: makes the current stream wait) until done.
  struct Pending;
  std::shared_ptr<Pending> all_reduce_sum_async(at::Tensor& tensor);
  static void wait(const std::shared_ptr<Pending>& pending);

  // ZeRO-1's two collectives over one flat buffer of world_size x n elements (n = output's or input's numel), both
  // asynchronous like all_reduce_sum_async. A sum reduce-scatter: rank r's `output` (n) receives the sum over ranks of
  // their `input` (world_size * n)'s r-th slice. `input` is scratch: it may hold anything afterwards (on Gloo, the
  // whole sum; see reduce_scatter_method).
  std::shared_ptr<Pending> reduce_scatter_sum_async(at::Tensor& output, at::Tensor& input);
  // An all-gather: `output` (world_size * n) receives every rank's `input` (n), in rank order.
  std::shared_ptr<Pending> all_gather_into_async(at::Tensor& output, at::Tensor& input);
  // How reduce_scatter_sum_async runs on this backend, for the result: NCCL's own reduce-scatter, or on Gloo, which has
  // no native one, an all-reduce of the whole buffer from which each rank copies its slice.
  std::string reduce_scatter_method() const;

  void broadcast_from_rank0(std::vector<at::Tensor>& tensors);
  // True on every rank when it is true on any rank (stopping and interruption are decided together).
  bool any(bool local);
  int64_t min(int64_t local);
  // Every rank's vector (all of the same length), indexed by rank.
  std::vector<std::vector<double>> all_gather(const std::vector<double>& local);

  // Whether any rank failed the configuration `key`, agreed through the store instead of a collective: a rank that
  // failed mid-configuration cannot join the collectives of the steps the others are still in, so an all-reduce here
  // would hang them all. When every rank failed alike (out of memory at the same batch), the suite goes on. When
  // some rank has not reported within half the group's timeout (at most a minute), it is stuck in a collective this
  // rank will never join: throws std::runtime_error naming the ranks, and the run ends (the launcher stops the others).
  bool any_failed(const std::string& key, bool failed);
  // Tears the group down without waiting for peers (NCCL's communicators), before a failing rank exits.
  void abort() noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  DistEnv env_;
};

}  // namespace stepwise::bench
