// The suites parse, name only known flags, and keep their published order; bad suite files are clear errors.
#include "ablations/run/suite.h"
#include "ablations/command_line/resolve.h"
#include "ablations/flag_table/flags.h"
#include "ablations/run/plan.h"

#include "tests/support.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <fstream>

namespace stepwise::ablations {
namespace {

// The suite's own choice of flag option `option` (for a device of `kind`) applied to a RunConfig, with nothing from
// the command line; fails the test where the suite leaves the option to its default.
bench::RunConfig chosen(const Suite& s, const std::string& option, c10::DeviceType kind = c10::kCPU) {
  const auto device_kind = kind == c10::kCUDA ? "cuda" : "cpu";
  const bool per_device = s.device_options.contains(device_kind) && s.device_options.at(device_kind).contains(option);
  EXPECT_TRUE(per_device || s.options.contains(option)) << s.name << " does not choose " << option;
  bench::RunConfig run;
  run.device = c10::Device(kind);
  apply_flag_options(run, {}, s);
  return run;
}

std::vector<std::vector<std::string>> added(const Suite& s) {
  std::vector<std::vector<std::string>> out;
  for (const auto& step : s.rows) out.push_back(step.added);
  return out;
}

TEST(Suites, EveryBuiltInSuiteParsesAndNamesOnlyKnownFlags) {
  const auto names = suite_names();
  EXPECT_EQ(names, (std::vector<std::string>{"fp8", "karpathy", "leave_one_out", "memory", "one_at_a_time", "raschka",
                                             "speedrun", "speedrun_leave_one_out", "speedrun_one_at_a_time"}));
  for (const auto& name : names) {
    const Suite s = find_suite(name);
    EXPECT_FALSE(s.description.empty()) << name;
    ASSERT_FALSE(s.rows.empty()) << name;
    for (const auto& step : s.rows)
      for (const auto& f : step.flags) EXPECT_NE(find_flag(f), nullptr) << name << ": " << f;
  }
}

TEST(Suites, RaschkaIsTheTenCumulativeStepsInTheTablesOrder) {
  const Suite s = find_suite("raschka");
  EXPECT_EQ(s.kind, SuiteKind::Cumulative);
  ASSERT_EQ(s.rows.size(), 11u);
  EXPECT_TRUE(s.rows[0].flags.empty());
  const std::vector<std::string> order{"dynamic_mask",  "tf32",  "fused_adamw", "pinned_memory", "bf16",
                                       "native_layers", "flash", "compile",     "vocab_padding", "max_batch"};
  for (size_t i = 1; i < s.rows.size(); ++i) EXPECT_EQ(s.rows[i].added, std::vector<std::string>{order[i - 1]});
  EXPECT_EQ(s.rows.back().flags.size(), 10u);
  EXPECT_EQ(chosen(s, "bf16_mode").bf16_mode, bench::Bf16Mode::Pure);
  EXPECT_EQ(chosen(s, "pinned_mode").pinned_mode, bench::PinnedMode::Blocking);
}

TEST(Suites, MemoryHoldsEachMemoryFlagAloneBothAndEachWithMaxBatch) {
  const Suite s = find_suite("memory");
  EXPECT_EQ(s.kind, SuiteKind::Matrix);
  EXPECT_EQ(to_string(s.kind), "matrix");
  EXPECT_EQ(chosen(s, "checkpoint_mode").model.checkpoint_mode(), model::CheckpointMode::Full);
  std::vector<std::vector<std::string>> flags;
  for (const auto& step : s.rows) {
    EXPECT_EQ(step.added, step.flags) << step.label;  // each held against the all-off baseline
    flags.push_back(step.flags);
  }
  EXPECT_EQ(flags, (std::vector<std::vector<std::string>>{{},
                                                          {"checkpoint"},
                                                          {"chunked_ce"},
                                                          {"checkpoint", "chunked_ce"},
                                                          {"max_batch"},
                                                          {"max_batch", "checkpoint"},
                                                          {"max_batch", "chunked_ce"},
                                                          {"max_batch", "checkpoint", "chunked_ce"}}));
}

TEST(Suites, SpeedrunAddsTheTechniquesInTheRecordsOrder) {
  // records #2 (schedule and positions at once), #3, #5 (four things), #9: speedrun-anchors.md's table; each step's
  // flags in table order.
  const Suite s = find_suite("speedrun");
  EXPECT_EQ(s.kind, SuiteKind::Cumulative);
  EXPECT_EQ(added(s), (std::vector<std::vector<std::string>>{{},
                                                             {"rotary", "trapezoid"},
                                                             {"muon"},
                                                             {"vocab_padding", "relu2", "zero_init_proj", "qk_norm"},
                                                             {"logit_softcap"}}));
  const std::vector<std::string> techniques{"vocab_padding", "rotary",         "trapezoid", "muon",
                                            "relu2",         "zero_init_proj", "qk_norm",   "logit_softcap"};
  EXPECT_EQ(s.rows.back().flags, techniques);
  // Each technique alone, and each left out of the whole stack.
  const Suite one = find_suite("speedrun_one_at_a_time"), loo = find_suite("speedrun_leave_one_out");
  ASSERT_EQ(one.rows.size(), techniques.size() + 1);
  ASSERT_EQ(loo.rows.size(), techniques.size() + 2);
  EXPECT_EQ(loo.rows[1].flags, techniques);
}

TEST(Suites, KarpathyStartsFromNativeLayersAndFollowsTheVideo) {
  const Suite s = find_suite("karpathy");
  EXPECT_EQ(s.rows[0].flags, std::vector<std::string>{"native_layers"});
  EXPECT_EQ(added(s), (std::vector<std::vector<std::string>>{
                          {}, {"tf32"}, {"bf16"}, {"compile"}, {"flash"}, {"vocab_padding"}, {"fused_adamw"}}));
  EXPECT_EQ(chosen(s, "bf16_mode").bf16_mode, bench::Bf16Mode::Autocast);
}

TEST(Suites, OneAtATimeAndLeaveOneOutCoverEveryFlagButTheLearningOnes) {
  const Suite one = find_suite("one_at_a_time");
  const size_t flags = all_flag_names().size();
  ASSERT_EQ(one.rows.size(), flags + 1);
  for (size_t i = 1; i < one.rows.size(); ++i) EXPECT_EQ(one.rows[i].flags.size(), 1u);
  const Suite loo = find_suite("leave_one_out");
  ASSERT_EQ(loo.rows.size(), flags + 2);
  EXPECT_TRUE(loo.rows[0].flags.empty());
  EXPECT_EQ(loo.rows[1].flags.size(), flags);
  for (size_t i = 2; i < loo.rows.size(); ++i) {
    EXPECT_EQ(loo.rows[i].flags.size(), flags - 1);
    ASSERT_EQ(loo.rows[i].removed.size(), 1u);
  }
}

class BadSuite : public ::testing::Test {
 protected:
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("stepwise-suite-" + std::to_string(getpid()) + ".json");
  void TearDown() override { std::filesystem::remove(path); }
  void expect_error(const std::string& content, const std::string& fragment) {
    std::ofstream(path) << content;
    try {
      load_suite(path);
      FAIL() << "expected an error containing " << fragment;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  }
};

TEST_F(BadSuite, UnknownFlag) {
  expect_error(R"({"kind": "cumulative", "rows": [{"label": "b", "add": []}, {"label": "x", "add": ["fp4"]}]})",
               "unknown flag 'fp4'");
}
TEST_F(BadSuite, UnknownKind) { expect_error(R"({"kind": "grid"})", "unknown kind 'grid'"); }
TEST_F(BadSuite, AMatrixStartsFromTheBaselineAndEveryOtherStepNamesAFlag) {
  expect_error(R"({"kind": "matrix", "rows": [{"label": "b", "flags": ["bf16"]}]})", "names no flag");
  expect_error(R"({"kind": "matrix", "rows": [{"label": "b", "flags": []}, {"label": "x", "flags": []}]})",
               "row 'x' names no flag");
  expect_error(R"({"kind": "matrix", "options": {"checkpoint_mode": "half"}, "rows": [{"label": "b"}]})",
               "option 'checkpoint_mode'");
}
TEST_F(BadSuite, UnknownOption) {
  expect_error(R"({"kind": "one_at_a_time", "options": {"fp4_mode": "x"}})", "unknown option 'fp4_mode'");
}
TEST_F(BadSuite, BadOptionValueNamesTheValidOnes) {
  expect_error(R"({"kind": "one_at_a_time", "options": {"bf16_mode": "fp16"}})", "option 'bf16_mode'");
  expect_error(R"({"kind": "one_at_a_time", "options": {"sdpa_backend": {"cuda": "fast"}}})",
               "option 'sdpa_backend.cuda'");
}
TEST(Suites, ADeviceKindsChoiceWinsOverTheSuitesOwn) {
  const Suite s = find_suite("raschka");  // sdpa_backend: flash on CUDA, auto on a CPU
  EXPECT_EQ(chosen(s, "sdpa_backend", c10::kCUDA).model.sdpa_backend(), model::SdpaBackend::Flash);
  EXPECT_EQ(chosen(s, "sdpa_backend", c10::kCPU).model.sdpa_backend(), model::SdpaBackend::Auto);
}
TEST_F(BadSuite, AnOptionOfAFlagNoneOfItsStepsRunsNamesTheFlag) {
  expect_error(R"({"kind": "one_at_a_time", "flags": ["flash"], "options": {"softcap": "15"}})",
               "option 'softcap' is the logit_softcap flag's, which none of its rows enables");
  std::ofstream(path) << R"({"kind": "one_at_a_time", "flags": ["logit_softcap"], "options": {"softcap": "15"}})";
  EXPECT_NO_THROW(load_suite(path));
}
TEST_F(BadSuite, StepAddingNothing) {
  expect_error(R"({"kind": "cumulative", "rows": [{"label": "b", "add": []}, {"label": "again", "add": []}]})",
               "row 'again' adds no flag");
}
TEST_F(BadSuite, TheOldStepsKeyNamesItsNewName) {
  // "steps" now means only a training step: a suite file from before the rename is told what to call its rows.
  expect_error(R"({"kind": "cumulative", "steps": [{"label": "b", "add": []}]})", "'steps' is now 'rows'");
  expect_error(R"({"kind": "matrix", "steps": [{"label": "b", "flags": []}]})", "'steps' is now 'rows'");
}

TEST_F(BadSuite, AKeyOnlyAnotherKindReadsIsRefused) {
  // A generated kind's rows come from "flags": rows of one's own would be ignored, every flag running instead.
  expect_error(R"({"kind": "one_at_a_time", "rows": [{"label": "b", "add": []}]})",
               "a one_at_a_time suite makes its rows from 'flags' (default: all), so 'rows' would be ignored");
  expect_error(R"({"kind": "leave_one_out", "flags": ["flash"], "rows": []})", "use kind cumulative or matrix");
  expect_error(R"({"kind": "cumulative", "flags": ["flash"], "rows": [{"label": "b", "add": []}]})",
               "a cumulative suite's rows name their own flags");
  expect_error(R"({"kind": "matrix", "flags": ["flash"], "rows": [{"label": "b", "flags": []}]})",
               "'flags' is what a generated suite (one_at_a_time, leave_one_out) sweeps");
}

TEST_F(BadSuite, NotJson) { expect_error("{kind: cumulative", "not valid JSON"); }

TEST(Suites, UnknownSuiteNamesTheValidOnes) {
  try {
    find_suite("speedrun_two");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("raschka"), std::string::npos) << e.what();
  }
}

TEST(Plan, OnTheCpuCudaOnlyStepsAreSkippedWithTheirReasonAndLaterStepsRecordThem) {
  const auto planned = plan_suite(find_suite("raschka"), testing::tiny_cpu_run());
  ASSERT_EQ(planned.size(), 11u);
  for (size_t i : {2u, 4u, 8u}) {  // tf32, pinned_memory, compile
    ASSERT_TRUE(planned[i].skip_reason) << planned[i].row.label;
    EXPECT_NE(planned[i].skip_reason->find("requires a CUDA device"), std::string::npos);
  }
  for (size_t i : {0u, 1u, 3u, 5u, 6u, 7u, 9u, 10u}) EXPECT_FALSE(planned[i].skip_reason) << planned[i].row.label;
  const auto& last = planned.back();
  EXPECT_EQ(last.effective.size(), 7u);
  EXPECT_EQ(last.skipped_flags.size(), 3u);
  EXPECT_FALSE(last.run.tf32);
  EXPECT_TRUE(last.run.max_batch);
}

TEST(Plan, DisabledFlagsLeaveEveryStepAndAStepLeftWithNothingIsSkipped) {
  const auto planned = plan_suite(find_suite("raschka"), testing::tiny_cpu_run(), {"bf16"});
  ASSERT_TRUE(planned[5].skip_reason);  // the bf16 step
  EXPECT_EQ(*planned[5].skip_reason, "its flag is switched off by --disable");
  for (const auto& p : planned) EXPECT_FALSE(p.run.bf16) << p.row.label;
  EXPECT_FALSE(planned[6].skip_reason);
  EXPECT_FALSE(planned[0].skip_reason);
}

TEST(Plan, APinnedSdpaBackendWithoutAKernelSkipsEveryConfigurationRunningFlash) {
  auto base = testing::tiny_cpu_run();  // trains with dropout, which the CPU flash kernel does not have
  base.model.sdpa_backend(model::SdpaBackend::Flash);
  const auto planned = plan_suite(find_suite("raschka"), base);
  for (size_t i = 0; i < planned.size(); ++i) {
    const bool runs_flash = planned[i].run.model.flash();
    EXPECT_EQ(runs_flash, i >= 7) << planned[i].row.label;
    if (!runs_flash) continue;
    ASSERT_TRUE(planned[i].skip_reason) << planned[i].row.label;
    if (i == 8) continue;  // compile's own CUDA reason comes first
    EXPECT_NE(planned[i].skip_reason->find("--sdpa-backend=flash has no dropout on CPU"), std::string::npos)
        << *planned[i].skip_reason;
  }
  base.model.sdpa_backend(model::SdpaBackend::Math);
  for (const auto& p : plan_suite(find_suite("raschka"), base))
    if (p.row.label != "tensor cores (TF32)" && p.row.label != "pinned memory" &&
        p.row.label != "compile (CUDA graph)") {
      EXPECT_FALSE(p.skip_reason) << p.row.label;
    }
}

TEST(Plan, FileStemsAreStableAndReadable) {
  EXPECT_EQ(file_stem(3, "fused AdamW"), "03_fused_adamw");
  EXPECT_EQ(file_stem(7, "FlashAttention (SDPA)"), "07_flashattention_sdpa");
  EXPECT_EQ(file_stem(1, "bf16+flash"), "01_bf16+flash");
}

}  // namespace
}  // namespace stepwise::ablations
