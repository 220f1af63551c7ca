// Device facts the engine needs, behind one interface: the CUDA calls compile wherever the toolkit is present and
// run only when a GPU is there.
#include "bench/device.h"

#include <torch/cuda.h>

#ifdef STEPWISE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include <ATen/Version.h>

#include <array>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

namespace stepwise::bench {

namespace {

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// oneDNN's ISA levels (ONEDNN_MAX_CPU_ISA, formerly DNNL_MAX_CPU_ISA) below the first with bf16 dot products,
// avx512_core_bf16: capped at one of these, oneDNN runs bf16 matmuls without the hardware's bf16 instructions.
constexpr std::array<const char*, 8> kOnednnIsasWithoutBf16{
    "SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2", "AVX512_CORE", "AVX512_CORE_VNNI", "AVX512_MIC"};

}  // namespace

// The CPU's native bf16 instructions, from /proc/cpuinfo. Without avx512_bf16 or amx_bf16, PyTorch emulates bf16
// matmuls in fp32 code paths, which explains a bf16 "slowdown" on such a CPU.
std::vector<std::string> cpu_bf16_flags() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  std::vector<std::string> found;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    for (const char* flag : {"avx512_bf16", "amx_bf16"})
      if ((" " + line + " ").find(std::string(" ") + flag + " ") != std::string::npos) found.emplace_back(flag);
    break;
  }
  return found;
}

std::optional<std::string> environment_value(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? std::optional<std::string>(value) : std::nullopt;
}

// Why this process does not run bf16 on the CPU's bf16 instructions, or nothing when it does: the hardware lacks them,
// or ATen's or oneDNN's own ISA cap hides them (ATEN_CPU_CAPABILITY, ONEDNN_MAX_CPU_ISA), both of which the process
// obeys whatever the hardware has.
std::optional<std::string> cpu_bf16_emulated_because(const std::vector<std::string>& flags,
                                                     const std::string& capability) {
  if (flags.empty()) return "the CPU has no avx512_bf16 or amx_bf16";
  if (capability.rfind("AVX512", 0) != 0)
    return "ATen dispatches at " + capability + " (ATEN_CPU_CAPABILITY), below AVX512";
  for (const char* name : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"})
    if (const auto cap = environment_value(name))
      for (const char* isa : kOnednnIsasWithoutBf16)
        if (upper(*cap) == isa) return std::string(name) + "=" + *cap + " caps oneDNN below AVX512_CORE_BF16";
  return std::nullopt;
}

std::optional<std::string> cpu_bf16_emulated() {
  return cpu_bf16_emulated_because(cpu_bf16_flags(), at::get_cpu_capability());
}

namespace {

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "unknown CPU";
}

}  // namespace

bool cuda_available() { return torch::cuda::is_available(); }

c10::Device resolve_device(const std::string& choice) {
  if (choice == "auto") return cuda_available() ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
  if (choice == "cpu") return c10::Device(c10::kCPU);
  if (choice == "cuda" || choice.rfind("cuda:", 0) == 0) {
    if (!cuda_available())
      throw std::invalid_argument("--device=" + choice + ": no CUDA device is available here (valid: auto, cpu)");
    c10::Device device = choice == "cuda" ? c10::Device(c10::kCUDA, 0) : c10::Device(choice);
    if (device.index() >= static_cast<int>(torch::cuda::device_count()))
      throw std::invalid_argument("--device=" + choice + ": only " + std::to_string(torch::cuda::device_count()) +
                                  " CUDA device(s) present");
    return device;
  }
  throw std::invalid_argument("unknown device '" + choice + "' (valid: auto, cpu, cuda, cuda:N)");
}

std::string device_name(const c10::Device& device) {
#ifdef STEPWISE_WITH_CUDA
  if (device.is_cuda()) return at::cuda::getDeviceProperties(device.index())->name;
#endif
  return cpu_model();
}

std::optional<std::pair<int, int>> compute_capability(const c10::Device& device) {
#ifdef STEPWISE_WITH_CUDA
  if (device.is_cuda() && cuda_available()) {
    const auto* props = at::cuda::getDeviceProperties(device.has_index() ? device.index() : 0);
    return std::make_pair(props->major, props->minor);
  }
#endif
  return std::nullopt;
}

void use_device(const c10::Device& device) {
#ifdef STEPWISE_WITH_CUDA
  if (device.is_cuda()) c10::cuda::set_device(device.has_index() ? device.index() : 0);
#endif
}

void synchronize(const c10::Device& device) {
#ifdef STEPWISE_WITH_CUDA
  if (device.is_cuda()) {
    c10::cuda::CUDAGuard guard(device.index());  // device_synchronize waits on the current device only
    c10::cuda::device_synchronize();
  }
#endif
}

void release_cached_memory(const c10::Device& device) {
#ifdef STEPWISE_WITH_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::emptyCache();
#endif
}

c10::Stream dedicated_stream(StreamRole role, const c10::Device& device) {
#ifdef STEPWISE_WITH_CUDA
  if (device.is_cuda()) {
    static std::mutex mutex;
    static std::map<std::pair<StreamRole, c10::DeviceIndex>, c10::Stream> streams;
    std::lock_guard lock(mutex);
    const auto key = std::make_pair(role, device.index());
    if (auto it = streams.find(key); it != streams.end()) return it->second;
    c10::cuda::CUDAGuard guard(device.index());
    cudaStream_t raw = nullptr;
    C10_CUDA_CHECK(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking));
    const c10::Stream stream = at::cuda::getStreamFromExternal(raw, device.index());
    streams.emplace(key, stream);
    return stream;
  }
#endif
  throw std::invalid_argument("dedicated_stream: " + device.str() + " has no streams (CUDA only)");
}

}  // namespace stepwise::bench
