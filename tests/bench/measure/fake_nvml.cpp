// A stand-in for the driver's libnvidia-ml.so.1, so the NVML path of bench/measure/gpu_state.h runs without a GPU:
// one GPU at PCI bus id 00000000:19:00.0 with fixed clocks, power and temperature, and the clocks-event reasons the
// test sets in $FAKE_NVML_REASONS (a number, e.g. 4 for the software power cap). Only the calls stepwise makes.
#include <cstdlib>

namespace {
constexpr int kSuccess = 0;
constexpr int kNotFound = 6;  // NVML_ERROR_NOT_FOUND
int the_gpu;                  // its address is the device handle
bool is_the_gpu(void* device) { return device == &the_gpu; }
}  // namespace

extern "C" {

int nvmlInit_v2() { return kSuccess; }

const char* nvmlErrorString(int result) { return result == kNotFound ? "Not Found" : "Unknown Error"; }

int nvmlDeviceGetHandleByPciBusId_v2(const char* id, void** device) {
  const char* known = "00000000:19:00.0";
  for (int i = 0; known[i] || id[i]; ++i)
    if (known[i] != id[i]) return kNotFound;
  *device = &the_gpu;
  return kSuccess;
}

int nvmlDeviceGetClockInfo(void* device, int type, unsigned* clock) {
  if (!is_the_gpu(device)) return kNotFound;
  *clock = type == 1 ? 1980 : 2619;  // SM, memory (MHz)
  return kSuccess;
}

int nvmlDeviceGetPowerUsage(void* device, unsigned* milliwatts) {
  *milliwatts = 612500;
  return is_the_gpu(device) ? kSuccess : kNotFound;
}

int nvmlDeviceGetEnforcedPowerLimit(void* device, unsigned* milliwatts) {
  *milliwatts = 700000;
  return is_the_gpu(device) ? kSuccess : kNotFound;
}

int nvmlDeviceGetTemperature(void* device, int, unsigned* celsius) {
  *celsius = 61;
  return is_the_gpu(device) ? kSuccess : kNotFound;
}

int nvmlDeviceGetCurrentClocksEventReasons(void* device, unsigned long long* reasons) {
  const char* set = std::getenv("FAKE_NVML_REASONS");
  *reasons = set ? std::strtoull(set, nullptr, 0) : 0;
  return is_the_gpu(device) ? kSuccess : kNotFound;
}

}  // extern "C"
