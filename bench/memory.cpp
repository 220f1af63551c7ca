// Peak memory over the measured steps, per device: the CUDA caching allocator's own statistics, or the process's
// peak RSS on a CPU, with what the window covered.
#include "bench/memory.h"

#include "bench/cpu_tensor_memory.h"

#ifdef STEPWISE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include <algorithm>
#include <fstream>
#include <string>

namespace stepwise::bench {

namespace {

// A field of /proc/self/status in kB, as bytes.
std::optional<int64_t> proc_status_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;
  return std::nullopt;
}

// The tensors' peak since the allocator's last reset, and the reset (the CUDA caching allocator's, or the CPU
// tensors').
std::optional<int64_t> allocator_peak(const c10::Device& device) {
#ifdef STEPWISE_WITH_CUDA
  if (device.is_cuda()) {
    constexpr auto kAll = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    return c10::cuda::CUDACachingAllocator::getDeviceStats(device.index()).allocated_bytes[kAll].peak;
  }
#endif
  if (counting_cpu_tensor_bytes()) return cpu_tensor_bytes().peak;
  return std::nullopt;
}

void restart_allocator_peak(const c10::Device& device) {
#ifdef STEPWISE_WITH_CUDA
  if (device.is_cuda()) {
    c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
    return;
  }
#endif
  reset_cpu_tensor_peak();
}

// The window's peaks folded in so far: the whole step's, and forward and backward's.
struct Window {
  std::optional<int64_t> step, forward_backward;
};
Window window;

void fold(std::optional<int64_t>& into, std::optional<int64_t> peak) {
  if (peak) into = std::max(into.value_or(0), *peak);
}

}  // namespace

void open_forward_backward(const c10::Device& device) {
  fold(window.step, allocator_peak(device));
  restart_allocator_peak(device);
}

void close_forward_backward(const c10::Device& device) {
  const auto peak = allocator_peak(device);
  fold(window.forward_backward, peak);
  fold(window.step, peak);
}

bool reset_peak_memory(const c10::Device& device, const char* clear_refs) {
#ifdef STEPWISE_WITH_CUDA
  if (device.is_cuda()) {
    window = {};
    c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
    return true;
  }
#endif
  // "5" resets the peak resident set size (Linux >= 4.0). The kernel answers the write itself, so the flush is
  // what fails when it refuses (no such file, a read-only /proc, an older kernel).
  window = {};
  reset_cpu_tensor_peak();
  std::ofstream out(clear_refs);
  out << "5" << std::flush;
  return out.good();
}

MemoryStats read_memory(const c10::Device& device) {
  MemoryStats m;
#ifdef STEPWISE_WITH_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    constexpr auto kAll = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    m.kind = "cuda_caching_allocator";
    m.peak_allocated_bytes = stats.allocated_bytes[kAll].peak;
    m.peak_reserved_bytes = stats.reserved_bytes[kAll].peak;
    m.current_allocated_bytes = stats.allocated_bytes[kAll].current;
    m.current_reserved_bytes = stats.reserved_bytes[kAll].current;
    fold(window.step, m.peak_allocated_bytes);
    m.peak_allocated_bytes = window.step;
    m.forward_backward_peak_bytes = window.forward_backward;
    return m;
  }
#endif
  m.kind = "process_rss";
  m.peak_rss_bytes = proc_status_bytes("VmHWM");
  // One column for tables: on CPU the "reserved" peak is the process's peak RSS.
  m.peak_reserved_bytes = m.peak_rss_bytes;
  m.current_reserved_bytes = proc_status_bytes("VmRSS");
  if (counting_cpu_tensor_bytes()) {
    const auto tensors = cpu_tensor_bytes();
    fold(window.step, tensors.peak);
    m.peak_allocated_bytes = window.step;
    m.current_allocated_bytes = tensors.current;
    m.forward_backward_peak_bytes = window.forward_backward;
  }
  return m;
}

double activation_element_bytes(const RunConfig& c) { return c.bf16 && c.bf16_mode == Bf16Mode::Pure ? 2 : 4; }

void split_peak(MemoryStats& m, const std::vector<at::Tensor>& parameters, const RunConfig& c, int64_t batch_size,
                int64_t optimizer_state_bytes) {
  int64_t weights = 0, trained = 0;
  for (const auto& p : parameters) {
    weights += static_cast<int64_t>(p.nbytes());
    if (p.requires_grad()) trained += static_cast<int64_t>(p.nbytes());
  }
  m.weights_bytes = weights;
  m.gradients_bytes = trained;
  m.optimizer_state_bytes = optimizer_state_bytes;
  if (const auto peak = m.forward_backward_peak_bytes ? m.forward_backward_peak_bytes : m.peak_allocated_bytes) {
    m.activation_bytes = std::max<int64_t>(0, *peak - *m.weights_bytes - *m.gradients_bytes - *m.optimizer_state_bytes);
    m.activation_basis = m.forward_backward_peak_bytes ? "forward_backward" : "measured_peak";
  }
  const double element = activation_element_bytes(c);
  m.estimated_activation_bytes =
      static_cast<double>(batch_size) * c.model.activation_bytes_per_sequence(c.seq_len, element, c.device.is_cuda()) +
      c.model.chunked_ce_step_bytes(batch_size * c.seq_len, element);
}

std::optional<int64_t> available_host_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line))
    if (line.rfind("MemAvailable:", 0) == 0) return std::stoll(line.substr(13)) * 1024;
  return std::nullopt;
}

std::optional<int64_t> device_memory_bytes(const c10::Device& device) {
#ifdef STEPWISE_WITH_CUDA
  if (device.is_cuda()) return static_cast<int64_t>(at::cuda::getDeviceProperties(device.index())->totalGlobalMem);
#endif
  return available_host_bytes();
}

double estimated_step_bytes(const RunConfig& c) {
  const auto& m = c.model;
  const double bytes = c.bf16 && c.bf16_mode == Bf16Mode::Pure ? 2 : 4;
  const double B = static_cast<double>(c.batch_size), T = static_cast<double>(c.seq_len);
  const double C = static_cast<double>(m.n_embd()), L = static_cast<double>(m.n_layer());
  const double H = static_cast<double>(m.n_head()), V = static_cast<double>(m.padded_vocab_size());
  const double state = 4 * static_cast<double>(m.parameter_count()) * bytes;  // weights, grads, exp_avg, exp_avg_sq
  // Per layer about 16 activations of width C kept for backward, and (explicit attention) H scores and their softmax
  // of T x T; then the logits and their gradient.
  double activations = B * T * (L * (16 * C + (m.flash() ? 0 : 2 * H * T)) + 2 * V) * bytes;
  // The memory flags (checkpoint, chunked_ce) shrink it by what the model's own estimate says they free.
  if (m.checkpoint() || m.chunked_ce()) {
    auto plain = m;
    plain.checkpoint(false).chunked_ce(false);
    const bool cuda = c.device.is_cuda();
    activations *= m.activation_bytes_per_sequence(c.seq_len, bytes, cuda) /
                   plain.activation_bytes_per_sequence(c.seq_len, bytes, cuda);
  }
  const double loader = 4 * 2 * B * T * 8;  // the staging buffers: prefetch x (inputs, targets) x int64
  return state + activations + loader;
}

}  // namespace stepwise::bench
