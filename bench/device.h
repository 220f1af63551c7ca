// Device choice and the few device facts the engine needs (name, synchronisation).
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Stream.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stepwise::bench {

bool cuda_available();
// "auto" (CUDA when a GPU is there, else CPU), "cpu", "cuda" or "cuda:N".
// Throws std::invalid_argument naming the valid choices, or saying that no GPU is present.
c10::Device resolve_device(const std::string& choice);
// Makes a CUDA device current on the calling thread, so the streams, events and allocator calls that default to
// the current device use it (a no-op on CPU).
void use_device(const c10::Device& device);
// The GPU's marketing name (e.g. "NVIDIA H100 80GB HBM3") or the CPU model from /proc/cpuinfo.
std::string device_name(const c10::Device& device);
// The CUDA device's compute capability as (major, minor), e.g. (9, 0) on Hopper; nullopt on a CPU
// (or where no GPU is present).
std::optional<std::pair<int, int>> compute_capability(const c10::Device& device);
// Waits for all queued work on the device (a no-op on CPU). Never called inside a timed step.
void synchronize(const c10::Device& device);
// Returns cached, unused memory to the driver after an out-of-memory error (a no-op on CPU).
void release_cached_memory(const c10::Device& device);

// The CPU's native bf16 instructions, from /proc/cpuinfo (avx512_bf16, amx_bf16).
std::vector<std::string> cpu_bf16_flags();
// Why this process does not run bf16 on the CPU's bf16 instructions, given the hardware's flags and the level ATen
// dispatches at, or nullopt when it does: the hardware lacks them, or ATen's or oneDNN's ISA cap hides them.
std::optional<std::string> cpu_bf16_emulated_because(const std::vector<std::string>& flags,
                                                     const std::string& capability);
// The same for this process (capture_env records it as env.cpu_bf16_emulated_because; muon's ns_dtype auto reads it).
std::optional<std::string> cpu_bf16_emulated();
// An environment variable's value, or nullopt when unset or empty.
std::optional<std::string> environment_value(const char* name);

// The side streams stepwise uses besides the compute stream.
enum class StreamRole {
  Copy,   // pinned_memory's non_blocking host-to-device copies
  Graph,  // compile's warm-up and capture
};
// One CUDA stream per role and device for the whole process, created on first use and never destroyed. PyTorch's
// stream pool hands out 32 streams in rotation, so a stream requested per configuration would, after enough
// configurations, be the same stream as another role's (or NCCL's) and serialise what should overlap.
c10::Stream dedicated_stream(StreamRole role, const c10::Device& device);

}  // namespace stepwise::bench
