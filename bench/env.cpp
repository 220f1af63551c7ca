// capture_env: every fact a reader needs to judge or reproduce a number.
#include "bench/env.h"

#include "bench/device.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#ifdef STEPWISE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <cuda_runtime_api.h>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/NCCLUtils.hpp>
#endif
#endif

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <ctime>
#include <memory>
#include <thread>

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
#if defined(__clang__)
  env["compiler"] = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  env["compiler"] = std::string("GNU ") + __VERSION__;
#else
  env["compiler"] = "unknown";
#endif
  env["cxx_standard"] = static_cast<long>(__cplusplus);
  const std::string git = std::string("git -C '") + STEPWISE_SOURCE_DIR + "' ";
  const std::string commit = run(git + "rev-parse --verify -q HEAD 2>/dev/null");
  env["git_commit"] = commit.empty() ? nlohmann::json() : nlohmann::json(commit);
  env["git_dirty"] = commit.empty() ? nlohmann::json()
                                    : nlohmann::json(!run(git + "status --porcelain --untracked-files=no 2>/dev/null").empty());
  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  env["host"] = host.data();
  env["timestamp"] = utc_timestamp();
  return env;
}

}  // namespace stepwise::bench
