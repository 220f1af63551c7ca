// Peak memory over the measured steps: the CUDA caching allocator's stats, or the process's peak RSS on CPU (and the
// CPU tensors' own peak, bench/cpu_tensor_memory.h); and that peak split into the weights, gradients and
// optimizer state, which every step holds, and the activations, which the memory flags shrink.
#pragma once

#include "bench/run_config.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <optional>
#include <string>

namespace stepwise::bench {

struct MemoryStats {
  std::string kind;   // "cuda_caching_allocator" or "process_rss"
  std::string scope;  // what the peaks cover (set by the runner): the measured steps, the capture too, or the process
  std::optional<int64_t> peak_allocated_bytes, peak_reserved_bytes;
  std::optional<int64_t> current_allocated_bytes, current_reserved_bytes;
  std::optional<int64_t> peak_rss_bytes;
  // The tensors' peak inside one forward and backward after the measured steps (Step::measure_activations): the
  // optimizer step's own temporaries (foreach AdamW's, the size of the weights) are not activations. Null for a
  // captured step.
  std::optional<int64_t> forward_backward_peak_bytes;
  // What every step holds, from the parameters: the weights, one gradient each, AdamW's two moments each.
  std::optional<int64_t> weights_bytes, gradients_bytes, optimizer_state_bytes;
  // forward_backward_peak_bytes (else peak_allocated_bytes) minus those three: the activations a step keeps for its
  // backward (and the loader's batch). A lower bound, since gradients are freed between steps and not all exist yet at
  // the peak.
  std::optional<int64_t> activation_bytes;
  // What activation_bytes was taken from: "forward_backward" (the window above, as every eager row) or
  // "measured_peak" (a captured step, whose activations live in its CUDA graph's pool: the whole phase's peak, AdamW's
  // temporaries included, so it is not comparable with the eager rows' figure and the report says so).
  std::string activation_basis;
  // The model's own estimate, batch x GPTConfig::activation_bytes_per_sequence, beside the measured figure.
  std::optional<double> estimated_activation_bytes;
};

// Element bytes of the activations: 2 with pure bf16, else 4 (autocast counted as fp32, an upper bound).
double activation_element_bytes(const RunConfig& config);
// Fills the split above from the parameters the step trains and the configuration's estimate at `batch_size`.
// `optimizer_state_bytes`: what the optimizer holds for the whole model (AdamW's two moments; Muon's one momentum per
// matrix and AdamW's moments for the rest; zero1's replicated equivalent).
void split_peak(MemoryStats& m, const std::vector<at::Tensor>& parameters, const RunConfig& config, int64_t batch_size,
                int64_t optimizer_state_bytes);

// Starts a new peak window (CUDA: resetPeakStats; CPU: writing "5" to /proc/self/clear_refs resets VmHWM). Returns
// false when the kernel refused, in which case the CPU peak still covers the whole process since start-up.
bool reset_peak_memory(const c10::Device& device, const char* clear_refs = "/proc/self/clear_refs");
MemoryStats read_memory(const c10::Device& device);
// Around one forward and backward after the measured steps (Step::measure_activations, off the clock): the allocator's
// peak is folded into the window's and restarted at open, and read at close, so the window keeps both the measured
// steps' whole peak and forward and backward's own. Host-side counters only (the
// CUDA caching allocator's statistics, or the CPU tensors'), no device synchronisation.
void open_forward_backward(const c10::Device& device);
void close_forward_backward(const c10::Device& device);

// Host memory the kernel says is available now (/proc/meminfo's MemAvailable), or nullopt where it cannot be read.
std::optional<int64_t> available_host_bytes();
// The memory a configuration may use: a GPU's total, or the host memory available now; nullopt where unknown.
std::optional<int64_t> device_memory_bytes(const c10::Device& device);
// A generous estimate of what one training step of `config` holds: weights, gradients and AdamW's two moments,
// activations kept for backward (the attention scores and the logits dominate), and the loader's buffers.
double estimated_step_bytes(const RunConfig& config);

}  // namespace stepwise::bench
