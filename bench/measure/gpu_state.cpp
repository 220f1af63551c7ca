// NVML through dlopen, and each row's readings at its phase boundaries.
#include "bench/measure/gpu_state.h"

#include <dlfcn.h>

#include <cstdlib>
#include <type_traits>
#include <utility>

#ifdef STEPWISE_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace stepwise::bench {

namespace {

// NVML's C ABI, as its reference manual documents it (the driver's nvml.h is not part of the CUDA toolkit here): a
// device is an opaque pointer, every call returns 0 on success.
using NvmlDevice = void*;
using NvmlReturn = int;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;         // NVML_CLOCK_SM
constexpr int kNvmlClockMem = 2;        // NVML_CLOCK_MEM
constexpr int kNvmlTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU

// nvmlClocksEventReasons (formerly ...ThrottleReasons), bit by bit.
struct Reason {
  uint64_t bit;
  const char* name;
  bool slows;  // holds the clocks below what the GPU would run at under load
};
constexpr Reason kReasons[] = {
    {0x1, "gpu_idle", false},
    {0x2, "applications_clocks_setting", false},
    {0x4, "sw_power_cap", true},
    {0x8, "hw_slowdown", true},
    {0x10, "sync_boost", false},
    {0x20, "sw_thermal_slowdown", true},
    {0x40, "hw_thermal_slowdown", true},
    {0x80, "hw_power_brake_slowdown", true},
    {0x100, "display_clock_setting", false},
};

std::string pci_bus_id_of(const c10::Device& device) {
#ifdef STEPWISE_WITH_CUDA
  char id[32] = {};
  if (cudaDeviceGetPCIBusId(id, sizeof(id), device.index() < 0 ? 0 : device.index()) == cudaSuccess) return id;
#endif
  return {};
}

nlohmann::json optional_number(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

nlohmann::json reading_json(const GpuReading& r) {
  return {{"sm_clock_mhz", optional_number(r.sm_clock_mhz)},
          {"mem_clock_mhz", optional_number(r.mem_clock_mhz)},
          {"power_w", optional_number(r.power_w)},
          {"power_limit_w", optional_number(r.power_limit_w)},
          {"temperature_c", optional_number(r.temperature_c)},
          {"throttle_reasons", clocks_event_reasons(r.reasons)}};
}

}  // namespace

std::vector<std::string> clocks_event_reasons(uint64_t mask) {
  std::vector<std::string> names;
  for (const auto& r : kReasons)
    if (mask & r.bit) names.emplace_back(r.name);
  return names;
}

bool throttles(uint64_t mask) {
  for (const auto& r : kReasons)
    if (r.slows && (mask & r.bit)) return true;
  return false;
}

struct Nvml::Api {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*by_pci_bus_id)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*clock)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*power)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*power_limit)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*temperature)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*reasons)(NvmlDevice, unsigned long long*) = nullptr;
  const char* (*error)(NvmlReturn) = nullptr;

  std::string say(NvmlReturn r) const { return error ? error(r) : "NVML error " + std::to_string(r); }
};

Nvml::Nvml(const std::string& library) : api_(std::make_unique<Api>()) {
  handle_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* why = dlerror();
    unavailable_ = "NVML (" + library + ") could not be loaded: " + (why ? why : "unknown error") +
                   "; it comes with the NVIDIA driver";
    return;
  }
  const auto find = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle_, name));
    if (!fn && !unavailable_) unavailable_ = std::string("NVML (") + library + ") lacks " + name;
  };
  find(api_->init, "nvmlInit_v2");
  find(api_->by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
  find(api_->clock, "nvmlDeviceGetClockInfo");
  find(api_->power, "nvmlDeviceGetPowerUsage");
  find(api_->power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  find(api_->temperature, "nvmlDeviceGetTemperature");
  // Renamed in CUDA 12.2's NVML; drivers export both names, older ones only the first.
  api_->reasons = reinterpret_cast<decltype(api_->reasons)>(dlsym(handle_, "nvmlDeviceGetCurrentClocksEventReasons"));
  if (!api_->reasons) find(api_->reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  api_->error = reinterpret_cast<decltype(api_->error)>(dlsym(handle_, "nvmlErrorString"));
  if (unavailable_) return;
  if (const NvmlReturn r = api_->init(); r != kNvmlSuccess) unavailable_ = "nvmlInit failed: " + api_->say(r);
}

Nvml::~Nvml() {
  if (handle_) dlclose(handle_);
}

std::optional<GpuReading> Nvml::read(const std::string& pci_bus_id, std::string& why) const {
  if (unavailable_) {
    why = *unavailable_;
    return std::nullopt;
  }
  NvmlDevice device = nullptr;
  if (const NvmlReturn r = api_->by_pci_bus_id(pci_bus_id.c_str(), &device); r != kNvmlSuccess) {
    why = "NVML does not know the GPU at PCI bus id '" + pci_bus_id + "': " + api_->say(r);
    return std::nullopt;
  }
  GpuReading reading;
  unsigned value = 0;
  if (api_->clock(device, kNvmlClockSm, &value) == kNvmlSuccess) reading.sm_clock_mhz = value;
  if (api_->clock(device, kNvmlClockMem, &value) == kNvmlSuccess) reading.mem_clock_mhz = value;
  if (api_->power(device, &value) == kNvmlSuccess) reading.power_w = value / 1000.0;  // milliwatts
  if (api_->power_limit(device, &value) == kNvmlSuccess) reading.power_limit_w = value / 1000.0;
  if (api_->temperature(device, kNvmlTemperatureGpu, &value) == kNvmlSuccess) reading.temperature_c = value;
  unsigned long long mask = 0;
  if (api_->reasons(device, &mask) == kNvmlSuccess) reading.reasons = mask;
  return reading;
}

const Nvml& system_nvml() {
  static const Nvml nvml([] {
    const char* library = std::getenv("STEPWISE_NVML_LIBRARY");
    return std::string(library && *library ? library : "libnvidia-ml.so.1");
  }());
  return nvml;
}

GpuState::GpuState(const c10::Device& device, const Nvml& nvml) : nvml_(&nvml) {
  if (!device.is_cuda()) {
    not_recorded_ = "not a CUDA device";
    return;
  }
  pci_bus_id_ = pci_bus_id_of(device);
  if (pci_bus_id_.empty()) not_recorded_ = "CUDA gave no PCI bus id for " + device.str();
}

GpuState::GpuState(std::string pci_bus_id, const Nvml& nvml) : nvml_(&nvml), pci_bus_id_(std::move(pci_bus_id)) {}

void GpuState::mark(const std::string& phase, bool start) {
  if (not_recorded_) return;
  std::string why;
  if (auto reading = nvml_->read(pci_bus_id_, why))
    marks_.push_back({phase, start, *reading});
  else
    not_recorded_ = why;  // a GPU NVML cannot read now will not be readable at the next mark either
}

bool GpuState::throttled() const {
  for (const auto& m : marks_)
    if (throttles(m.reading.reasons)) return true;
  return false;
}

nlohmann::json GpuState::to_json() const {
  if (not_recorded_) return {{"status", "not recorded"}, {"reason", *not_recorded_}};
  nlohmann::json phases = nlohmann::json::object();
  uint64_t seen = 0;
  for (const auto& m : marks_) {
    phases[m.phase][m.start ? "start" : "end"] = reading_json(m.reading);
    seen |= m.reading.reasons;
  }
  std::vector<std::string> slowing;
  for (const auto& r : kReasons)
    if (r.slows && (seen & r.bit)) slowing.emplace_back(r.name);
  return {{"status", "recorded"}, {"reason", nullptr},        {"pci_bus_id", pci_bus_id_},
          {"phases", phases},     {"throttled", throttled()}, {"throttle_reasons", slowing}};
}

}  // namespace stepwise::bench
