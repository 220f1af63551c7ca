// What dropout draws from, kept in a forward and set again for its recompute in the backward (checkpoint's full mode):
// torch.random.fork_rng for LibTorch. Outside a CUDA graph capture a generator's position is its state tensor, as
// torch.utils.checkpoint keeps it. Inside a capture (compile's CUDA-graph step captures forward and backward) that
// tensor cannot be read or written — CUDAGeneratorImpl asserts that no capture is under way — and what a captured
// dropout kernel draws is set by the generator's offset within the graph instead: the recompute runs on a replica of
// the generator that starts at the forward's offset (CUDAGeneratorImpl::graphsafe_set_state), so on every replay it
// draws the forward's masks, and the live generator goes on where the backward found it.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <optional>

namespace stepwise::model {

// Whether a CUDA graph is being captured on the device's current stream (never on a CPU).
enum class Capture { None, Underway };
Capture capture_status(const c10::Device& device);

// How a generator's position is kept under that capture status: its state tensor, or its offset within the graph.
enum class RngKeeping { StateTensor, GraphOffset };
RngKeeping rng_keeping(Capture capture);

// The CPU generator's state and, for a CUDA device, its generator's position, taken when a forward starts.
struct GeneratorStates {
  at::Tensor cpu;  // CPU ops never run inside a capture: always the state tensor
  std::optional<c10::Device> device;
  RngKeeping keeping = RngKeeping::StateTensor;
  at::Tensor device_state;        // StateTensor
  uint64_t graph_offset = 0;      // GraphOffset: the generator's offset within the graph being captured
  int64_t* graph_seed = nullptr;  // GraphOffset: the graph's seed and base offset, device scalars it reads on replay
  int64_t* graph_base_offset = nullptr;

  static GeneratorStates of(const c10::Device& device);
};

// Sets the forward's states for the lifetime of this scope, then puts back the states it found.
class ForkedGenerators {
 public:
  explicit ForkedGenerators(const GeneratorStates& forward);
  ~ForkedGenerators();
  ForkedGenerators(const ForkedGenerators&) = delete;
  ForkedGenerators& operator=(const ForkedGenerators&) = delete;

 private:
  at::Tensor cpu_;
  std::optional<c10::Device> device_;
  RngKeeping keeping_ = RngKeeping::StateTensor;
  at::Tensor device_state_;  // StateTensor: the state tensor found
  at::Generator live_;       // GraphOffset: the generator that held the live state, swapped back in at the end
};

}  // namespace stepwise::model
