// Collectives over c10d: TCPStore rendezvous, ProcessGroupGloo on CPU, ProcessGroupNCCL on CUDA.
#include "bench/distributed/collectives.h"

#include "bench/oom.h"

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <unistd.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <utility>

namespace stepwise::bench {

struct Collectives::Pending {
  c10::intrusive_ptr<c10d::Work> work;
  std::function<void()> then;  // host work once `work` is done (Gloo's reduce-scatter: copying out the slice)
};

struct Collectives::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> group;
  std::string backend;
  c10::Device device = c10::kCPU;  // where the small control tensors live: the GPU for NCCL, the CPU for Gloo
  std::chrono::milliseconds timeout{0};
};

namespace {
// Ranks that agree on a configuration's outcome report within moments of each other (they stop on the same step);
// a rank still silent after this (or half the collectives' timeout, whichever is shorter, so the verdict comes before
// the stuck rank's own collective times out) is stuck in a collective.
constexpr std::chrono::milliseconds kAgreementTimeout{60'000};
}  // namespace

namespace {

std::string contains_any(const std::string& what, std::initializer_list<const char*> parts) {
  for (const char* p : parts)
    if (what.find(p) != std::string::npos) return p;
  return "";
}

// c10d's own messages are long; say what happened and what to do.
std::runtime_error rendezvous_error(const DistEnv& env, std::chrono::milliseconds timeout, const std::exception& e) {
  const std::string what = short_message(e);
  const std::string where = env.master_addr + ":" + std::to_string(env.master_port);
  const std::string seconds = std::to_string(timeout.count() / 1000);
  if (!contains_any(what, {"EADDRINUSE", "address already in use", "Address already in use"}).empty())
    return std::runtime_error("MASTER_PORT " + std::to_string(env.master_port) + " is already in use on " +
                              env.master_addr + "; set MASTER_PORT to a free port (or leave it unset for " +
                              "--nproc-per-node to pick one)");
  if (!contains_any(what, {"Timed out", "timed out", "timeout"}).empty())
    return std::runtime_error(
        env.rank == 0 ? "not every rank joined the rendezvous at " + where + " within " + seconds + " s (" + what + ")"
                      : "rank " + std::to_string(env.rank) + " could not reach the rendezvous at " + where +
                            " within " + seconds + " s (" + what + ")");
  return std::runtime_error("rendezvous at " + where + " failed: " + what);
}

}  // namespace

Collectives::Collectives(const DistEnv& env, const c10::Device& device, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()), env_(env) {
  impl_->timeout = timeout;
  try {
    c10d::TCPStoreOptions o;
    o.port = static_cast<uint16_t>(env.master_port);
    o.isServer = env.rank == 0;
    o.numWorkers = static_cast<size_t>(env.world_size);
    o.waitWorkers = true;  // rank 0 returns only once every rank has connected, or fails after the timeout
    o.timeout = timeout;
    impl_->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, o);
  } catch (const std::exception& e) {
    throw rendezvous_error(env, timeout, e);
  }
  try {
    if (device.is_cuda()) {
#ifdef USE_C10D_NCCL
      c10::cuda::set_device(device.index());
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = timeout;
      impl_->group = c10::make_intrusive<c10d::ProcessGroupNCCL>(impl_->store, env.rank, env.world_size, options);
      impl_->backend = "nccl";
      impl_->device = device;
#else
      throw std::runtime_error("this build has no NCCL");
#endif
    } else {
      auto options = c10d::ProcessGroupGloo::Options::create();
      options->timeout = timeout;
      // Loopback for a single machine; otherwise the interface this host's name resolves to.
      char host[256] = {};
      gethostname(host, sizeof(host) - 1);
      const bool local = env.master_addr == "127.0.0.1" || env.master_addr == "localhost";
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(local ? "127.0.0.1" : host));
      impl_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, env.rank, env.world_size, options);
      impl_->backend = "gloo";
    }
  } catch (const std::exception& e) {
    throw std::runtime_error("rank " + std::to_string(env.rank) + ": the " +
                             (device.is_cuda() ? std::string("NCCL") : std::string("Gloo")) +
                             " process group did not start: " + short_message(e));
  }
}

Collectives::~Collectives() {
#ifdef USE_C10D_NCCL
  // NCCL communicators must be torn down explicitly, or their destructor may wait on peers that are gone.
  if (impl_ && impl_->backend == "nccl") {
    try {
      impl_->group->shutdown();
    } catch (...) {
    }
  }
#endif
}

std::string Collectives::backend() const { return impl_->backend; }

std::shared_ptr<Collectives::Pending> Collectives::all_reduce_sum_async(at::Tensor& tensor) {
  std::vector<at::Tensor> tensors{tensor};
  return std::make_shared<Pending>(Pending{impl_->group->allreduce(tensors), nullptr});
}

void Collectives::wait(const std::shared_ptr<Pending>& pending) {
  pending->work->wait();
  if (pending->then) std::exchange(pending->then, nullptr)();
}

namespace {

// The sizes a flat reduce-scatter or all-gather needs: `whole` holds world_size slices of `slice`'s length.
void check_flat(const at::Tensor& whole, const at::Tensor& slice, int world_size, const char* who) {
  if (!whole.is_contiguous() || !slice.is_contiguous() || whole.dim() != 1 || slice.dim() != 1 ||
      whole.numel() != slice.numel() * world_size || whole.scalar_type() != slice.scalar_type())
    throw std::invalid_argument(std::string(who) + ": needs contiguous 1-D tensors of one dtype, the whole " +
                                std::to_string(world_size) + " times the slice (got " + std::to_string(whole.numel()) +
                                " and " + std::to_string(slice.numel()) + ")");
}

}  // namespace

std::shared_ptr<Collectives::Pending> Collectives::reduce_scatter_sum_async(at::Tensor& output, at::Tensor& input) {
  check_flat(input, output, env_.world_size, "reduce_scatter_sum_async");
  if (impl_->backend == "gloo") {
    // c10d's Gloo reduce-scatter (torch 2.11's ProcessGroupGloo::_reduce_scatter_base) is itself an all-reduce of a
    // clone of the buffer and a copy of the slice: the same, minus the clone.
    std::vector<at::Tensor> tensors{input};
    const int64_t n = output.numel(), begin = n * env_.rank;
    auto copy_slice = [output, input, begin, n] { output.copy_(input.slice(0, begin, begin + n)); };
    return std::make_shared<Pending>(Pending{impl_->group->allreduce(tensors), copy_slice});
  }
  return std::make_shared<Pending>(Pending{impl_->group->_reduce_scatter_base(output, input), nullptr});
}

std::shared_ptr<Collectives::Pending> Collectives::all_gather_into_async(at::Tensor& output, at::Tensor& input) {
  check_flat(output, input, env_.world_size, "all_gather_into_async");
  return std::make_shared<Pending>(Pending{impl_->group->_allgather_base(output, input), nullptr});
}

std::string Collectives::reduce_scatter_method() const {
  return impl_->backend == "gloo" ? "all_reduce + slice (Gloo has no native reduce_scatter)" : "reduce_scatter";
}

void Collectives::broadcast_from_rank0(std::vector<at::Tensor>& tensors) {
  if (tensors.empty()) return;
  // One flat buffer: one collective instead of one per parameter.
  std::vector<at::Tensor> flat_views;
  for (const auto& t : tensors) flat_views.push_back(t.detach().reshape(-1));
  std::vector<at::Tensor> flat{at::cat(flat_views)};
  c10d::BroadcastOptions options;
  options.rootRank = 0;
  impl_->group->broadcast(flat, options)->wait();
  int64_t offset = 0;
  for (auto& t : tensors) {
    t.detach().copy_(flat[0].slice(0, offset, offset + t.numel()).view_as(t));
    offset += t.numel();
  }
}

bool Collectives::any(bool local) {
  std::vector<at::Tensor> flag{at::full({1}, local ? 1 : 0, at::TensorOptions().dtype(at::kInt).device(impl_->device))};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::MAX;
  impl_->group->allreduce(flag, options)->wait();
  return flag[0].item<int>() != 0;
}

int64_t Collectives::min(int64_t local) {
  std::vector<at::Tensor> value{at::full({1}, local, at::TensorOptions().dtype(at::kLong).device(impl_->device))};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::MIN;
  impl_->group->allreduce(value, options)->wait();
  return value[0].item<int64_t>();
}

std::vector<std::vector<double>> Collectives::all_gather(const std::vector<double>& local) {
  auto opts = at::TensorOptions().dtype(at::kDouble).device(impl_->device);
  std::vector<at::Tensor> input{at::tensor(local, at::TensorOptions().dtype(at::kDouble)).to(impl_->device)};
  std::vector<std::vector<at::Tensor>> output(1);
  for (int r = 0; r < env_.world_size; ++r) output[0].push_back(at::empty({static_cast<int64_t>(local.size())}, opts));
  impl_->group->allgather(output, input)->wait();
  std::vector<std::vector<double>> out;
  for (const auto& t : output[0]) {
    auto cpu = t.cpu();
    out.emplace_back(cpu.data_ptr<double>(), cpu.data_ptr<double>() + cpu.numel());
  }
  return out;
}

bool Collectives::any_failed(const std::string& key, bool failed) {
  const auto timeout = std::min(impl_->timeout / 2, kAgreementTimeout);
  auto status_key = [&](int rank) { return "stepwise/status/" + key + "/" + std::to_string(rank); };
  impl_->store->set(status_key(env_.rank), std::vector<uint8_t>{static_cast<uint8_t>(failed ? '1' : '0')});
  std::vector<std::string> keys;
  for (int r = 0; r < env_.world_size; ++r) keys.push_back(status_key(r));
  try {
    impl_->store->wait(keys, timeout);
  } catch (const std::exception&) {
    std::string missing;
    for (int r = 0; r < env_.world_size; ++r)
      if (!impl_->store->check({status_key(r)})) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    throw std::runtime_error("rank " + std::to_string(env_.rank) + (failed ? " failed" : " finished") + " '" + key +
                             "', but rank(s) " + missing + " did not report within " +
                             std::to_string(timeout.count() / 1000) +
                             " s: they are inside a collective this rank will not join, so data parallel cannot go on");
  }
  bool any = false;
  for (const auto& k : keys) any = any || impl_->store->get(k) == std::vector<uint8_t>{'1'};
  return any;
}

void Collectives::abort() noexcept {
  try {
    impl_->group->abort();
  } catch (...) {
  }
}

}  // namespace stepwise::bench
