// MFU: the peak table's lookup by device name and precision, and no guessed peak for unknown devices.
#include "bench/measure/mfu.h"
#include "model/config.h"

#include <gtest/gtest.h>

namespace stepwise::bench {
namespace {

TEST(PeakFlops, KnownGpusByTheirCudaNames) {
  EXPECT_EQ(find_peak_flops("NVIDIA H100 80GB HBM3")->label, "H100 SXM");
  EXPECT_EQ(find_peak_flops("NVIDIA H100 PCIe")->label, "H100 PCIe");
  EXPECT_EQ(find_peak_flops("NVIDIA H200")->label, "H200 SXM");
  EXPECT_EQ(find_peak_flops("NVIDIA A100-SXM4-40GB")->label, "A100");
  // NVL parts run at lower clocks and power than SXM; GH200's name contains "H200" but its GPU is an H100's.
  EXPECT_EQ(find_peak_flops("NVIDIA H100 NVL")->label, "H100 NVL");
  EXPECT_EQ(find_peak_flops("NVIDIA H200 NVL")->label, "H200 NVL");
  EXPECT_EQ(find_peak_flops("NVIDIA GH200 480GB")->label, "GH200");
  EXPECT_EQ(find_peak_flops("NVIDIA H100 80GB HBM3 MIG 3g.40gb"), nullptr);
  EXPECT_EQ(find_peak_flops("NVIDIA GeForce RTX 4090"), nullptr);
}

TEST(Mfu, UsesThePeakOfThePrecisionInEffect) {
  // gpt2-124m's FLOP count, from the one place it is derived; ~30% on an H100 in bf16 (Jjschwartz's figure).
  const double fpt = stepwise::model::preset("gpt2-124m").config.flops_per_token(1024), tps = 350e3;
  const auto bf16 = compute_mfu(true, "NVIDIA H100 80GB HBM3", "bf16", fpt, tps);
  ASSERT_TRUE(bf16.value);
  EXPECT_NEAR(*bf16.value, fpt * tps / 989.4e12, 1e-12);
  EXPECT_NEAR(*bf16.value, 0.3026, 1e-3);
  const auto tf32 = compute_mfu(true, "NVIDIA H100 80GB HBM3", "tf32", fpt, tps);
  EXPECT_NEAR(*tf32.value, 2 * *bf16.value, 1e-12);
  EXPECT_DOUBLE_EQ(*compute_mfu(true, "NVIDIA A100-SXM4-80GB", "fp32", fpt, tps).peak_flops, 19.5e12);
}

TEST(Mfu, Fp8RowsUseTheFp8PeakOnlyWhereTheTableHasOne) {
  const double fpt = 1e9, tps = 1e5;
  const auto h100 = compute_mfu(true, "NVIDIA H100 80GB HBM3", "fp8", fpt, tps);
  ASSERT_TRUE(h100.value);
  EXPECT_DOUBLE_EQ(*h100.peak_flops, *find_peak_flops("NVIDIA H100 80GB HBM3")->fp8);
  EXPECT_NEAR(*h100.peak_flops / find_peak_flops("NVIDIA H100 80GB HBM3")->bf16, 2.0, 1e-3);  // FP8 doubles the rate
  EXPECT_EQ(h100.peak_label, "H100 SXM");
  EXPECT_EQ(h100.precision, "fp8");
  // An A100 has no FP8 tensor cores: no MFU, and the reason says so, never the bf16 peak passed off as FP8's.
  const auto a100 = compute_mfu(true, "NVIDIA A100-SXM4-80GB", "fp8", fpt, tps);
  EXPECT_FALSE(a100.value);
  EXPECT_FALSE(a100.peak_flops);
  EXPECT_NE(a100.reason->find("FP8"), std::string::npos);
}

TEST(Mfu, AnFp8RowCountsEachLayersFlopsAgainstThePeakOfThePrecisionItRanIn) {
  // At gpt2-124m the small-GEMM filter leaves the head and attention in bf16: counting every FLOP against the FP8
  // peak would halve the MFU of what ran. Each part meets its own peak: the seconds at peak add up.
  const auto* h100 = find_peak_flops("NVIDIA H100 80GB HBM3");
  const double fpt = 1e9, tps = 2e5, fp8_part = 0.25e9;
  const auto mixed = compute_mfu(true, "NVIDIA H100 80GB HBM3", "fp8", fpt, tps, 0, fp8_part);
  ASSERT_TRUE(mixed.value);
  const double seconds_at_peak = fp8_part / *h100->fp8 + (fpt - fp8_part) / h100->bf16;  // per token
  EXPECT_NEAR(*mixed.value, tps * seconds_at_peak, 1e-12);
  EXPECT_NEAR(*mixed.peak_flops, fpt / seconds_at_peak, 1.0);
  EXPECT_GT(*mixed.peak_flops, h100->bf16);
  EXPECT_LT(*mixed.peak_flops, *h100->fp8);
  EXPECT_EQ(mixed.precision, "fp8");
  EXPECT_DOUBLE_EQ(*mixed.fp8_flops_per_token, fp8_part);
  // Every layer in FP8: the FP8 peak; none (the filter kept them all in bf16): a bf16 row, against bf16's peak.
  EXPECT_DOUBLE_EQ(*compute_mfu(true, "NVIDIA H100 80GB HBM3", "fp8", fpt, tps, 0, fpt).peak_flops, *h100->fp8);
  const auto none = compute_mfu(true, "NVIDIA H100 80GB HBM3", "fp8", fpt, tps, 0, 0.0);
  EXPECT_DOUBLE_EQ(*none.peak_flops, h100->bf16);
  EXPECT_EQ(none.precision, "bf16");
  EXPECT_FALSE(compute_mfu(true, "NVIDIA H100 80GB HBM3", "bf16", fpt, tps).fp8_flops_per_token) << "not an fp8 row";
}

TEST(Mfu, HfuCountsTheRecomputeThatMfuDoesNot) {
  // Full checkpointing runs every block's forward twice: the same tokens/s is more hardware FLOPs, never more MFU.
  auto config = stepwise::model::preset("gpt2-124m").config;
  const double tps = 350e3;
  const auto plain = compute_mfu(true, "NVIDIA H100 80GB HBM3", "bf16", config.flops_per_token(1024), tps,
                                 config.hardware_flops_per_token(1024));
  EXPECT_DOUBLE_EQ(*plain.hfu, *plain.value);
  config.checkpoint(true);
  const auto full = compute_mfu(true, "NVIDIA H100 80GB HBM3", "bf16", config.flops_per_token(1024), tps,
                                config.hardware_flops_per_token(1024));
  EXPECT_DOUBLE_EQ(*full.value, *plain.value);
  EXPECT_GT(*full.hfu, 1.2 * *full.value);
  EXPECT_FALSE(compute_mfu(false, "AMD EPYC", "fp32", 1e9, 1e5, 2e9).hfu);
}

TEST(Mfu, UnknownGpuAndCpuGiveNullWithAReason) {
  const auto gpu = compute_mfu(true, "NVIDIA GeForce RTX 4090", "bf16", 1e9, 1e5);
  EXPECT_FALSE(gpu.value);
  EXPECT_NE(gpu.reason->find("RTX 4090"), std::string::npos);
  const auto mig = compute_mfu(true, "NVIDIA H100 80GB HBM3 MIG 1g.10gb", "bf16", 1e9, 1e5);
  EXPECT_FALSE(mig.value);
  EXPECT_NE(mig.reason->find("MIG slice"), std::string::npos);
  const auto cpu = compute_mfu(false, "AMD EPYC", "fp32", 1e9, 1e5);
  EXPECT_FALSE(cpu.value);
  EXPECT_TRUE(cpu.reason);
}

}  // namespace
}  // namespace stepwise::bench
