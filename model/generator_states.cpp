// The forward's generator states and their restoration for a recompute, inside a CUDA graph capture or outside one.
#include "model/generator_states.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/ops/from_blob.h>

#ifdef STEPWISE_WITH_CUDA
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#endif

#include <mutex>
#include <stdexcept>

namespace stepwise::model {

namespace {

at::Tensor read(at::Generator gen) {
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get_state();
}

void write(at::Generator gen, const at::Tensor& state) {
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(state);
}

#ifdef STEPWISE_WITH_CUDA
// A generator whose state starts at the forward's offset within the graph being captured and reads the same seed and
// base offset on replay as the live generator: the kernels the recompute captures draw what the forward's drew.
at::Generator replica_at(const GeneratorStates& forward) {
  auto state = c10::make_intrusive<at::CUDAGeneratorState>(/*seed=*/0, /*philox_offset_per_thread=*/0,
                                                           /*offset_intragraph=*/forward.graph_offset);
  state->capturing_ = true;  // increase() accepts offsets only from a state in capture mode
  const auto scalar = at::TensorOptions().dtype(at::kLong).device(*forward.device);
  // Views of the live state's device scalars (no allocation, which a capture would record).
  state->seed_extragraph_ =
      at::for_blob(forward.graph_seed, {1}).options(scalar).target_device(*forward.device).make_tensor();
  state->offset_extragraph_ =
      at::for_blob(forward.graph_base_offset, {1}).options(scalar).target_device(*forward.device).make_tensor();
  return at::make_generator<at::CUDAGeneratorImpl>(forward.device->index(), std::move(state));
}
#endif

}  // namespace

Capture capture_status(const c10::Device& device) {
#ifdef STEPWISE_WITH_CUDA
  if (device.is_cuda() && c10::cuda::currentStreamCaptureStatusMayInitCtx() != c10::cuda::CaptureStatus::None)
    return Capture::Underway;
#endif
  return Capture::None;
}

RngKeeping rng_keeping(Capture capture) {
  return capture == Capture::Underway ? RngKeeping::GraphOffset : RngKeeping::StateTensor;
}

GeneratorStates GeneratorStates::of(const c10::Device& device) {
  GeneratorStates s;
  s.cpu = read(at::detail::getDefaultCPUGenerator());
  if (device.type() == c10::kCPU) return s;
  s.device = device;
  at::Generator gen = at::globalContext().defaultGenerator(device);
  s.keeping = rng_keeping(capture_status(device));
  if (s.keeping == RngKeeping::StateTensor) {
    s.device_state = read(gen);
    return s;
  }
#ifdef STEPWISE_WITH_CUDA
  std::lock_guard<std::mutex> lock(gen.mutex());
  // An increment of 0 reads the position without moving it.
  const at::PhiloxCudaState position = gen.get<at::CUDAGeneratorImpl>()->philox_cuda_state(0);
  s.graph_offset = position.offset_intragraph_;
  s.graph_seed = position.seed_.ptr;
  s.graph_base_offset = position.offset_.ptr;
#endif
  return s;
}

ForkedGenerators::ForkedGenerators(const GeneratorStates& forward)
    : device_(forward.device), keeping_(forward.keeping) {
  if (device_ && keeping_ != rng_keeping(capture_status(*device_)))
    throw std::logic_error("a recompute must run under the capture status its forward ran under");
  at::Generator cpu = at::detail::getDefaultCPUGenerator();
  cpu_ = read(cpu);
  write(cpu, forward.cpu);
  if (!device_) return;
  at::Generator gen = at::globalContext().defaultGenerator(*device_);
  if (keeping_ == RngKeeping::StateTensor) {
    device_state_ = read(gen);
    write(gen, forward.device_state);
    return;
  }
#ifdef STEPWISE_WITH_CUDA
  std::lock_guard<std::mutex> lock(gen.mutex());
  live_ = gen.graphsafe_get_state();  // shares the live state: swapping it back in loses nothing it counted
  gen.graphsafe_set_state(replica_at(forward));
#endif
}

ForkedGenerators::~ForkedGenerators() {
  write(at::detail::getDefaultCPUGenerator(), cpu_);
  if (!device_) return;
  at::Generator gen = at::globalContext().defaultGenerator(*device_);
  if (keeping_ == RngKeeping::StateTensor) {
    write(gen, device_state_);
    return;
  }
#ifdef STEPWISE_WITH_CUDA
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.graphsafe_set_state(live_);
#endif
}

}  // namespace stepwise::model
