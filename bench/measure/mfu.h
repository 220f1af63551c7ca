// Model FLOPs utilisation: nanoGPT's FLOP count against the dense peak of the GPU for the precision used; and hardware
// FLOPs utilisation beside it, which also counts what the hardware runs again (checkpoint's recompute).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace stepwise::bench {

// Dense tensor-core (bf16, tf32, fp8) and non-tensor-core (fp32) peaks, FLOP/s, with where the figures come from.
struct PeakFlops {
  std::string match;    // substring of the CUDA device name
  std::string exclude;  // the name must not contain this (e.g. "PCIe" for the SXM entry); empty = none
  std::string label;
  double bf16, tf32, fp32;
  std::string source;
  // Dense FP8 (e4m3) tensor-core peak: the datasheet's "with sparsity" figure halved; none for a GPU without FP8
  // tensor cores (A100), whose FP8 rows then get no MFU.
  std::optional<double> fp8 = std::nullopt;
};

const std::vector<PeakFlops>& peak_flops_table();
// A MIG slice ("... MIG 3g.40gb") has part of the GPU's compute; its peak is not the table's.
bool is_mig_slice(const std::string& device_name);
// The table entry for a device name, or nullptr: an unknown GPU gets no MFU, never a guessed peak.
const PeakFlops* find_peak_flops(const std::string& device_name);

struct Mfu {
  std::optional<double> value;  // fraction, e.g. 0.31
  std::string precision;        // "fp32", "tf32", "bf16" or "fp8": whose peak `value` divides by
  // An fp8 row: the peak its FLOPs would run at, FP8's for the layers that ran in FP8 and bf16's for the rest
  // (docs/measurement.md, "MFU of an fp8 row"); otherwise the precision's own peak.
  std::optional<double> peak_flops;
  std::string peak_label, peak_source;  // the peak table's entry the value uses (empty without one)
  double flops_per_token = 0;
  std::optional<std::string> reason;  // why value is null
  // HFU: the FLOPs the hardware ran per token (GPTConfig::hardware_flops_per_token), recompute included; equal to MFU
  // when nothing is recomputed.
  std::optional<double> hfu;
  double hardware_flops_per_token = 0;
  std::optional<double> fp8_flops_per_token;  // an fp8 row: the part of flops_per_token that ran in FP8
};

// precision: the matmul precision actually in effect. hardware_flops_per_token: 0 = flops_per_token.
// fp8_flops_per_token (an fp8 row): the FLOPs of the layers that ran in FP8. Each part is counted against its own
// precision's peak, so MFU is the share of the step the work would take at those peaks; with none in FP8 the row is
// a bf16 row. Without it an fp8 row counts every FLOP against the FP8 peak.
Mfu compute_mfu(bool is_cuda, const std::string& device_name, const std::string& precision, double flops_per_token,
                double tokens_per_s, double hardware_flops_per_token = 0,
                std::optional<double> fp8_flops_per_token = std::nullopt);

}  // namespace stepwise::bench
