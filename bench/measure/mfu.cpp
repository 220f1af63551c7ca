// MFU against a sourced table of dense peaks: an unknown GPU (or a MIG slice) gets no MFU and a reason, never a
// guessed peak.
#include "bench/measure/mfu.h"

#include <algorithm>

namespace stepwise::bench {

bool is_mig_slice(const std::string& device_name) { return device_name.find("MIG") != std::string::npos; }

const std::vector<PeakFlops>& peak_flops_table() {
  // Order matters: the first entry whose `match` is in the name (and `exclude` is not) wins.
  static const std::vector<PeakFlops> table{
      {"GH200", "", "GH200", 989.4e12, 494.7e12, 66.9e12, "NVIDIA GH200 datasheet (the H100 SXM's GPU)", 1978.9e12},
      {"H200 NVL", "", "H200 NVL", 835.5e12, 417.5e12, 60e12,
       "NVIDIA H200 datasheet, NVL column (sparse figures halved)", 1670.5e12},
      {"H200", "", "H200 SXM", 989.4e12, 494.7e12, 66.9e12, "NVIDIA H200 datasheet (same die as H100 SXM)", 1978.9e12},
      {"H100 NVL", "", "H100 NVL", 835.5e12, 417.5e12, 60e12,
       "NVIDIA H100 datasheet, NVL column (sparse figures halved)", 1670.5e12},
      {"H100 PCIe", "", "H100 PCIe", 756e12, 378e12, 51.2e12, "NVIDIA H100 datasheet; llm.c llmc/mfu.h", 1513e12},
      {"H100", "PCIe", "H100 SXM", 989.4e12, 494.7e12, 66.9e12, "NVIDIA H100 datasheet; torchtitan get_peak_flops",
       1978.9e12},
      {"A100", "", "A100", 312e12, 156e12, 19.5e12, "NVIDIA A100 datasheet; llm.c llmc/mfu.h"},
  };
  return table;
}

const PeakFlops* find_peak_flops(const std::string& device_name) {
  if (is_mig_slice(device_name)) return nullptr;
  for (const auto& entry : peak_flops_table()) {
    if (device_name.find(entry.match) == std::string::npos) continue;
    if (!entry.exclude.empty() && device_name.find(entry.exclude) != std::string::npos) continue;
    return &entry;
  }
  return nullptr;
}

Mfu compute_mfu(bool is_cuda, const std::string& device_name, const std::string& precision, double flops_per_token,
                double tokens_per_s, double hardware_flops_per_token, std::optional<double> fp8_flops_per_token) {
  Mfu m;
  // An fp8 row whose small-GEMM filter kept every layer in bf16 computes in bf16: its FLOPs meet bf16's peak.
  const bool no_fp8_layer = precision == "fp8" && fp8_flops_per_token && *fp8_flops_per_token <= 0;
  m.precision = no_fp8_layer ? "bf16" : precision;
  if (precision == "fp8") m.fp8_flops_per_token = fp8_flops_per_token.value_or(flops_per_token);
  m.flops_per_token = flops_per_token;
  m.hardware_flops_per_token = hardware_flops_per_token > 0 ? hardware_flops_per_token : flops_per_token;
  if (!is_cuda) {
    m.reason = "no peak FLOP/s is known for CPUs";
    return m;
  }
  if (is_mig_slice(device_name)) {
    m.reason = "'" + device_name + "' is a MIG slice: its share of the GPU's peak FLOP/s is not known";
    return m;
  }
  const PeakFlops* peak = find_peak_flops(device_name);
  if (!peak) {
    m.reason = "no peak FLOP/s known for '" + device_name + "' (known: A100, H100 SXM/PCIe/NVL, H200 SXM/NVL, GH200)";
    return m;
  }
  if (m.precision == "fp8" && !peak->fp8) {
    m.reason = peak->label + " has no FP8 tensor cores in the peak table: an FP8 row gets no MFU";
    return m;
  }
  if (m.precision == "fp8") {
    // The seconds a token's work takes at peak: the FP8 layers' FLOPs at FP8's rate, the rest at bf16's.
    const double fp8 = std::min(*m.fp8_flops_per_token, flops_per_token);
    const double ideal_s = fp8 / *peak->fp8 + (flops_per_token - fp8) / peak->bf16;
    m.peak_flops = flops_per_token / ideal_s;
  } else {
    m.peak_flops = m.precision == "bf16" ? peak->bf16 : m.precision == "tf32" ? peak->tf32 : peak->fp32;
  }
  m.peak_label = peak->label;
  m.peak_source = peak->source;
  m.value = flops_per_token * tokens_per_s / *m.peak_flops;
  m.hfu = m.hardware_flops_per_token * tokens_per_s / *m.peak_flops;
  return m;
}

}  // namespace stepwise::bench
