// bench/measure/gpu_state.h without a GPU: a CPU row and a machine without NVML say "not recorded" and why, and
// through a stand-in NVML (tests/bench/measure/fake_nvml.cpp) each phase edge is read, and a row is marked throttled
// exactly when a reason that holds the clocks down was set.
#include "bench/measure/gpu_state.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace stepwise::bench {
namespace {

constexpr const char* kTheGpu = "00000000:19:00.0";  // the one GPU fake_nvml.cpp knows

struct Reasons {  // sets what the stand-in reports for the scope of a test
  explicit Reasons(const char* mask) { setenv("FAKE_NVML_REASONS", mask, 1); }
  ~Reasons() { unsetenv("FAKE_NVML_REASONS"); }
};

const Nvml& fake() {
  static const Nvml nvml(STEPWISE_FAKE_NVML);
  return nvml;
}

nlohmann::json two_phases(GpuState& state) {
  for (const char* phase : {"warmup", "measured"}) {
    state.mark(phase, true);
    state.mark(phase, false);
  }
  return state.to_json();
}

TEST(GpuState, ACpuRowIsNotRecordedAndSaysWhy) {
  GpuState state(c10::Device(c10::kCPU), fake());
  const auto j = two_phases(state);
  EXPECT_EQ(j["status"], "not recorded");
  EXPECT_EQ(j["reason"], "not a CUDA device");
  EXPECT_FALSE(state.throttled());
}

TEST(GpuState, WithoutNvmlTheResultSaysItCouldNotBeLoaded) {
  const Nvml absent("/nonexistent/libnvidia-ml.so.1");
  ASSERT_TRUE(absent.unavailable());
  GpuState state(kTheGpu, absent);
  const auto j = two_phases(state);
  EXPECT_EQ(j["status"], "not recorded");
  EXPECT_NE(j["reason"].get<std::string>().find("could not be loaded"), std::string::npos) << j.dump();
  EXPECT_NE(j["reason"].get<std::string>().find("comes with the NVIDIA driver"), std::string::npos) << j.dump();
}

TEST(GpuState, EveryPhaseEdgeIsReadThroughNvml) {
  ASSERT_FALSE(fake().unavailable()) << *fake().unavailable();
  Reasons none("0");
  GpuState state(kTheGpu, fake());
  const auto j = two_phases(state);
  ASSERT_EQ(j["status"], "recorded") << j.dump();
  for (const char* phase : {"warmup", "measured"})
    for (const char* edge : {"start", "end"}) {
      const auto& r = j["phases"][phase][edge];
      EXPECT_EQ(r["sm_clock_mhz"], 1980) << phase << " " << edge;
      EXPECT_EQ(r["mem_clock_mhz"], 2619);
      EXPECT_DOUBLE_EQ(r["power_w"].get<double>(), 612.5);  // NVML reports milliwatts
      EXPECT_DOUBLE_EQ(r["power_limit_w"].get<double>(), 700.0);
      EXPECT_EQ(r["temperature_c"], 61);
    }
  EXPECT_FALSE(j["throttled"].get<bool>());
}

TEST(GpuState, ARowIsThrottledOnlyByAReasonThatHoldsTheClocksDown) {
  {
    Reasons idle("0x1");  // idle between phases, and application clocks: not throttling
    GpuState state(kTheGpu, fake());
    const auto j = two_phases(state);
    EXPECT_FALSE(j["throttled"].get<bool>());
    EXPECT_EQ(j["phases"]["warmup"]["start"]["throttle_reasons"], nlohmann::json({"gpu_idle"}));
  }
  {
    Reasons capped("0x24");  // the software power cap and a thermal slowdown
    GpuState state(kTheGpu, fake());
    const auto j = two_phases(state);
    EXPECT_TRUE(state.throttled());
    EXPECT_TRUE(j["throttled"].get<bool>());
    EXPECT_EQ(j["throttle_reasons"], nlohmann::json({"sw_power_cap", "sw_thermal_slowdown"}));
  }
}

TEST(GpuState, AGpuNvmlDoesNotKnowIsNotRecorded) {
  GpuState state("00000000:AA:00.0", fake());
  const auto j = two_phases(state);
  EXPECT_EQ(j["status"], "not recorded");
  EXPECT_NE(j["reason"].get<std::string>().find("00000000:AA:00.0"), std::string::npos);
  EXPECT_NE(j["reason"].get<std::string>().find("Not Found"), std::string::npos);
}

TEST(GpuState, ReasonsAreNamedAsNvmlNamesThem) {
  EXPECT_EQ(clocks_event_reasons(0x8 | 0x40 | 0x80),
            (std::vector<std::string>{"hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"}));
  EXPECT_TRUE(throttles(0x8));
  EXPECT_FALSE(throttles(0x1 | 0x2 | 0x10 | 0x100));
}

}  // namespace
}  // namespace stepwise::bench
