// The peak table and the MFU computation.
#include "bench/mfu.h"

namespace stepwise::bench {

const std::vector<PeakFlops>& peak_flops_table() {
  // Order matters: the first entry whose `match` is in the name (and `exclude` is not) wins.
  static const std::vector<PeakFlops> table{
      {"H200", "", "H200 SXM", 989.4e12, 494.7e12, 66.9e12, "NVIDIA H200 datasheet (same die as H100 SXM)"},
      {"H100 PCIe", "", "H100 PCIe", 756e12, 378e12, 51.2e12, "NVIDIA H100 datasheet; llm.c llmc/mfu.h"},
      {"H100", "PCIe", "H100 SXM", 989.4e12, 494.7e12, 66.9e12, "NVIDIA H100 datasheet; torchtitan get_peak_flops"},
      {"A100", "", "A100", 312e12, 156e12, 19.5e12, "NVIDIA A100 datasheet; llm.c llmc/mfu.h"},
  };
  return table;
}

const PeakFlops* find_peak_flops(const std::string& device_name) {
  for (const auto& entry : peak_flops_table()) {
    if (device_name.find(entry.match) == std::string::npos) continue;
    if (!entry.exclude.empty() && device_name.find(entry.exclude) != std::string::npos) continue;
    return &entry;
  }
  return nullptr;
}

Mfu compute_mfu(bool is_cuda, const std::string& device_name, const std::string& precision, double flops_per_token,
                double tokens_per_s) {
  Mfu m;
  m.precision = precision;
  m.flops_per_token = flops_per_token;
  if (!is_cuda) {
    m.reason = "no peak FLOP/s is known for CPUs";
    return m;
  }
  const PeakFlops* peak = find_peak_flops(device_name);
  if (!peak) {
    m.reason = "no peak FLOP/s known for '" + device_name + "' (known: A100, H100 SXM/PCIe, H200)";
    return m;
  }
  m.peak_flops = precision == "bf16" ? peak->bf16 : precision == "tf32" ? peak->tf32 : peak->fp32;
  m.value = flops_per_token * tokens_per_s / *m.peak_flops;
  return m;
}

}  // namespace stepwise::bench
