// RunConfig's derived values and the names of its "how" options.
#include "bench/run_config.h"

#include "bench/device.h"

namespace stepwise::bench {

namespace {
// On a GPU the out-of-memory error ends the probe; this only bounds it on very large cards.
constexpr int64_t kCudaMaxBatchLimit = 1024;
// On a CPU nothing runs out of memory in reasonable time; stop at this multiple of the base batch.
constexpr int64_t kCpuMaxBatchFactor = 4;
// The probe's time cap on a GPU: each power of two is a fresh model's few steps, and the out-of-memory error ends it.
constexpr double kCudaMaxBatchTimeS = 120;
}  // namespace

std::string to_string(Bf16Mode m) { return kBf16ModeNames.to_string(m); }
Bf16Mode bf16_mode_from_string(const std::string& s) { return kBf16ModeNames.from_string(s); }

std::string to_string(PinnedMode m) { return kPinnedModeNames.to_string(m); }

MuonNsDtype resolved_ns_dtype(MuonNsDtype d, const c10::Device& device) {
  if (d != MuonNsDtype::Auto) return d;
  return device.is_cuda() || !cpu_bf16_emulated() ? MuonNsDtype::Bf16 : MuonNsDtype::Float32;
}
PinnedMode pinned_mode_from_string(const std::string& s) { return kPinnedModeNames.from_string(s); }

std::string RunConfig::precision() const {
  if (model.fp8()) return "fp8";
  if (bf16) return "bf16";
  if (tf32 && device.is_cuda()) return "tf32";
  return "fp32";
}

int64_t RunConfig::effective_max_batch_limit() const {
  if (max_batch_limit > 0) return max_batch_limit;
  return device.is_cuda() ? kCudaMaxBatchLimit : kCpuMaxBatchFactor * batch_size;
}

double RunConfig::effective_max_batch_time() const {
  if (max_batch_time_s > 0) return max_batch_time_s;
  return device.is_cuda() ? kCudaMaxBatchTimeS : timing.stop.max_time_s;
}

}  // namespace stepwise::bench
