// Device choice and the few device facts the engine needs (name, synchronisation).
#pragma once

#include <c10/core/Device.h>

#include <string>

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
// Waits for all queued work on the device (a no-op on CPU). Never called inside a timed step.
void synchronize(const c10::Device& device);
// Returns cached, unused memory to the driver after an out-of-memory error (a no-op on CPU).
void release_cached_memory(const c10::Device& device);

}  // namespace stepwise::bench
