// The bytes CPU tensors hold, current and peak, as the CUDA caching allocator counts them on a GPU. A CPU's process RSS
// cannot show what a step's activations take: the malloc policy keeps freed memory in the process, so the resident
// set stays at its first peak. This wraps the CPU allocator once, at start-up, and counts every tensor's bytes in and
// out; the runner reads the peak over the measured steps and subtracts the weights, gradients and optimizer state.
#pragma once

#include <cstdint>

namespace stepwise::bench {

// Installs the counting CPU allocator (each block allocated by c10::alloc_cpu with a 64-byte header that records its
// size). Idempotent; call it first thing in main, before any tensor: a block allocated before is not counted.
void count_cpu_tensor_bytes();
bool counting_cpu_tensor_bytes();

struct CpuTensorBytes {
  int64_t current = 0, peak = 0;
};
// What CPU tensors hold now, and the most they held since the last reset.
CpuTensorBytes cpu_tensor_bytes();
// Starts a new peak window at the current figure.
void reset_cpu_tensor_peak();

}  // namespace stepwise::bench
