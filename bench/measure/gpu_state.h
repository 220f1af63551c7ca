// The GPU's state while a row is measured: SM and memory clocks, power draw and limit, temperature, and the reasons
// the GPU gives for holding its clocks down, read through NVML at the start and end of each phase (warm-up, measured
// steps). A GPU that throttles runs the same step slower, so a row it throttled during is marked — nvbench refuses
// throttled samples — and a reader comparing providers or reproducing an MFU sees the clocks it ran at. NVML comes
// with the driver, not the toolkit: it is loaded with dlopen, and where it is absent (or on a CPU) the result says
// "not recorded" and why. Reading it is host work between phases, never inside a timed step.
#pragma once

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stepwise::bench {

// One reading of the GPU. A field NVML would not give is nullopt.
struct GpuReading {
  std::optional<double> sm_clock_mhz, mem_clock_mhz, power_w, power_limit_w, temperature_c;
  uint64_t reasons = 0;  // NVML's clocks-event reasons, a bit mask
};

// The reasons in a mask by NVML's names ("sw_power_cap", "hw_thermal_slowdown", ...), and whether any of them slows
// the GPU below the clocks it would run at: a power or thermal cap, or a hardware slowdown. Idle, application clocks
// and sync boost are not throttling.
std::vector<std::string> clocks_event_reasons(uint64_t mask);
bool throttles(uint64_t mask);

// NVML, loaded once per library path. A library that cannot be loaded, or a function it lacks, leaves `unavailable`
// with why; reading then gives nothing.
class Nvml {
 public:
  explicit Nvml(const std::string& library);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  const std::optional<std::string>& unavailable() const { return unavailable_; }
  // The GPU at a PCI bus id ("00000000:19:00.0", what CUDA calls it, so CUDA_VISIBLE_DEVICES cannot mix GPUs up);
  // nullopt with the reason in `why` when NVML does not know it.
  std::optional<GpuReading> read(const std::string& pci_bus_id, std::string& why) const;

 private:
  struct Api;
  void* handle_ = nullptr;
  std::unique_ptr<Api> api_;
  std::optional<std::string> unavailable_;
};

// The library the engine loads: $STEPWISE_NVML_LIBRARY, else the driver's libnvidia-ml.so.1.
const Nvml& system_nvml();

// The readings of one row: each phase's start and end.
class GpuState {
 public:
  // A CUDA device's state through `nvml`; on a CPU nothing is read and the result says why.
  GpuState(const c10::Device& device, const Nvml& nvml = system_nvml());
  // The GPU at a PCI bus id, whatever CUDA sees (tests read a stand-in NVML this way).
  GpuState(std::string pci_bus_id, const Nvml& nvml);
  void mark(const std::string& phase, bool start);
  bool throttled() const;
  // {status: "recorded" | "not recorded", reason, phases: {phase: {start, end}}, throttled, throttle_reasons}.
  nlohmann::json to_json() const;

 private:
  struct Mark {
    std::string phase;
    bool start;
    GpuReading reading;
  };
  const Nvml* nvml_ = nullptr;
  std::string pci_bus_id_;
  std::optional<std::string> not_recorded_;
  std::vector<Mark> marks_;
};

}  // namespace stepwise::bench
