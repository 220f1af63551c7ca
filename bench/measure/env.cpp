// capture_env: every fact a reader needs to judge or reproduce a number.
#include "bench/measure/env.h"

#include "bench/host_allocator.h"

#include "bench/device.h"
#include "bench/memory.h"
#include "bench/source_dir.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/Version.h>

#ifdef STEPWISE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <cuda_runtime_api.h>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/NCCLUtils.hpp>
#endif
#endif

#include <link.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace stepwise::bench {

namespace {

std::string run(const std::string& command) {
  std::array<char, 256> buffer{};
  std::string out;
  std::unique_ptr<FILE, decltype(&pclose)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return out;
  while (fgets(buffer.data(), buffer.size(), pipe.get())) out += buffer.data();
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string cuda_version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

// The loaded kernel module's version, read from sysfs: unlike nvidia-smi it cannot hang on a wedged driver.
std::string kernel_driver_version() {
  std::ifstream in("/sys/module/nvidia/version");
  std::string version;
  std::getline(in, version);
  return version;
}

// The CUDA libraries this process actually loaded, by file: the executable and libtorch_cuda.so each have their own
// search path, and two copies of one runtime in a process is the failure this makes visible
// (cmake/WheelCudaLibraries.cmake).
nlohmann::json loaded_cuda_libraries() {
  static constexpr std::array<std::pair<const char*, const char*>, 7> kWatched{{{"cudart", "libcudart.so"},
                                                                                {"cupti", "libcupti.so"},
                                                                                {"cublas", "libcublas.so"},
                                                                                {"cudnn", "libcudnn.so"},
                                                                                {"nccl", "libnccl.so"},
                                                                                {"torch_cuda", "libtorch_cuda.so"},
                                                                                {"cuda_driver", "libcuda.so"}}};
  std::vector<std::string> paths;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (info->dlpi_name && *info->dlpi_name)
          static_cast<std::vector<std::string>*>(out)->push_back(info->dlpi_name);
        return 0;
      },
      &paths);
  auto libraries = nlohmann::json::object();
  for (const auto& [key, stem] : kWatched) {
    auto found = nlohmann::json::array();
    for (const auto& path : paths) {
      const auto base = path.substr(path.find_last_of('/') + 1);
      if (base.rfind(stem, 0) == 0) found.push_back(path);
    }
    if (!found.empty()) libraries[key] = found;  // more than one file for a key is the mix-up itself
  }
  return libraries;
}

}  // namespace

std::string utc_timestamp(bool compact) {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), compact ? "%Y%m%dT%H%M%SZ" : "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

nlohmann::json capture_env(const c10::Device& device) {
  nlohmann::json env;
  env["device_kind"] = device.is_cuda() ? "cuda" : "cpu";
  env["device_name"] = device_name(device);
  env["cpu_model"] = device_name(c10::Device(c10::kCPU));
  env["cpu_threads"] = at::get_num_threads();
  env["hardware_threads"] = std::thread::hardware_concurrency();
  // The level ATen's CPU kernels dispatch at (it follows ATEN_CPU_CAPABILITY), beside the caps the process obeys.
  const std::string capability = at::get_cpu_capability();
  env["cpu_capability"] = capability;
  env["cpu_isa_caps"] = nlohmann::json::object();
  for (const char* name : {"ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"})
    if (const auto cap = environment_value(name)) env["cpu_isa_caps"][name] = *cap;
  if (!device.is_cuda()) {
    const auto bf16 = cpu_bf16_flags();
    const auto emulated = cpu_bf16_emulated_because(bf16, capability);
    env["cpu_bf16_flags"] = bf16;
    env["cpu_bf16_native"] = !emulated;
    env["cpu_bf16_emulated_because"] = emulated ? nlohmann::json(*emulated) : nlohmann::json();
  }
#ifdef STEPWISE_WITH_CUDA
  if (device.is_cuda()) {
    const auto* props = at::cuda::getDeviceProperties(device.index());
    env["compute_capability"] = std::to_string(props->major) + "." + std::to_string(props->minor);
    env["gpu_memory_bytes"] = props->totalGlobalMem;
    env["gpu_count"] = at::cuda::device_count();
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    env["driver_cuda_version"] = cuda_version_string(driver);
    env["driver_version"] = kernel_driver_version();
    env["cuda_runtime_version"] = cuda_version_string(runtime);
    // The cuDNN actually loaded, which can differ from the one torch was built against.
    env["cudnn_version"] = at::globalContext().hasCuDNN() ? at::detail::getCUDAHooks().versionRuntimeCuDNN() : 0;
#ifdef USE_C10D_NCCL
    env["nccl_version"] = c10d::getNcclVersion();
#endif
  }
#endif
  env["torch_version"] = STEPWISE_TORCH_VERSION;
  env["libraries"] = loaded_cuda_libraries();
  env["host_allocator"] = current_host_allocator().to_json();  // what this process's rows ran under
#if defined(__clang__)
  env["compiler"] = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  env["compiler"] = std::string("GNU ") + __VERSION__;
#else
  env["compiler"] = "unknown";
#endif
  env["cxx_standard"] = static_cast<long>(__cplusplus);
  const std::string git = std::string("git -C '") + source_dir().string() + "' ";
  const std::string commit = run(git + "rev-parse --verify -q HEAD 2>/dev/null");
  env["git_commit"] = commit.empty() ? nlohmann::json() : nlohmann::json(commit);
  env["git_dirty"] = commit.empty()
                         ? nlohmann::json()
                         : nlohmann::json(!run(git + "status --porcelain --untracked-files=no 2>/dev/null").empty());
  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  env["host"] = host.data();
  env["timestamp"] = utc_timestamp();
  return env;
}

}  // namespace stepwise::bench
