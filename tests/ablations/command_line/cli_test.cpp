// The command line: valid requests parse; each kind of bad input is a UsageError naming the problem.
#include "ablations/command_line/cli.h"
#include "ablations/command_line/resolve.h"
#include "ablations/flag_table/flags.h"
#include "tests/ablations/command_line/command_line_support.h"

#include <gtest/gtest.h>

namespace stepwise::ablations {
namespace {

using testing::parse;

// The request's flag options applied to a RunConfig, as resolve_run applies them under no suite.
bench::RunConfig with_options(const Request& r) {
  bench::RunConfig run;
  apply_flag_options(run, r.flag_options, single_configuration({}, false));
  return run;
}

void expect_usage_error(std::vector<std::string> args, const std::string& fragment) {
  testing::expect_usage_error([](auto a) { return parse(std::move(a)); }, std::move(args), fragment);
}

TEST(Cli, ASingleConfigurationAndItsOptionsGoStraightIntoTheRunConfig) {
  const auto r = parse(
      {"--enable=flash,bf16", "--preset=tiny", "--batch-size", "4", "--bf16-mode=autocast", "--steps=7", "--lr=1e-3"});
  EXPECT_EQ(r.enable, (std::vector<std::string>{"bf16", "flash"}));
  EXPECT_EQ(r.preset, "tiny");
  EXPECT_EQ(r.batch_size, 4);
  EXPECT_EQ(r.timing.min_steps, 7u);
  EXPECT_DOUBLE_EQ(r.run.adamw.lr(), 1e-3);
  EXPECT_EQ(with_options(r).bf16_mode, bench::Bf16Mode::Autocast);
  // What was given is known, so the device's defaults fill only the rest (ablations/command_line/resolve.cpp).
  EXPECT_TRUE(r.batch_size && r.timing.min_steps && r.flag_options.contains("bf16_mode"));
  EXPECT_FALSE(r.timing.warmup || r.seq_len);
  EXPECT_EQ(r.action, Request::Action::Run);
}

TEST(Cli, EnableAllMinusDisabled) {
  const auto r = parse({"--enable=all", "--disable=compile,max_batch"});
  EXPECT_EQ(r.enable.size(), all_flag_names().size() - 2);
}

TEST(Cli, Listings) {
  EXPECT_EQ(parse({"--list-flags"}).action, Request::Action::ListFlags);
  EXPECT_EQ(parse({"--describe", "--preset=gpt2-124m"}).action, Request::Action::Describe);
}

TEST(Cli, UnknownFlag) { expect_usage_error({"--enable=fp4"}, "unknown flag 'fp4'"); }
TEST(Cli, DuplicatedFlag) { expect_usage_error({"--enable=bf16,bf16"}, "named twice"); }
// --count-ops counts a throughput row's steps with the profiler, which on a GPU takes the CUPTI --trace claims.
TEST(Cli, CountOpsRefusesTraceAndATargetLoss) {
  EXPECT_TRUE(parse({"--count-ops"}).count_ops);
  expect_usage_error({"--count-ops", "--trace"}, "--count-ops and --trace both take CUPTI");
  expect_usage_error({"--count-ops", "--target-loss=3"}, "drop --target-loss");
}
TEST(Cli, EnabledAndDisabled) { expect_usage_error({"--enable=bf16", "--disable=bf16"}, "both enabled and disabled"); }
TEST(Cli, UnknownOption) { expect_usage_error({"--turbo"}, "--turbo"); }
TEST(Cli, UnknownPresetNamesTheValidOnes) { expect_usage_error({"--preset=gpt5"}, "gpt2-124m"); }
TEST(Cli, BadChoice) { expect_usage_error({"--bf16-mode=fp16"}, "autocast"); }
TEST(Cli, BadCheckpointModeNamesTheValidOnes) { expect_usage_error({"--checkpoint-mode=half"}, "selective"); }
TEST(Cli, NonPositiveChunkRows) { expect_usage_error({"--ce-chunk-rows=0"}, "--ce-chunk-rows"); }
TEST(Cli, TheMemoryFlagsModesGoIntoTheRequest) {
  const auto r = parse({"--enable=checkpoint,chunked_ce", "--checkpoint-mode=selective", "--ce-chunk-rows=256"});
  EXPECT_EQ(with_options(r).model.checkpoint_mode(), model::CheckpointMode::Selective);
  EXPECT_EQ(with_options(r).model.ce_chunk_rows(), 256);
  EXPECT_TRUE(r.flag_options.contains("ce_chunk_rows"));
}
TEST(Cli, NonPositiveBatch) { expect_usage_error({"--batch-size=0"}, "--batch-size"); }
TEST(Cli, SuiteAndEnable) { expect_usage_error({"--suite=raschka", "--enable=bf16"}, "exclude each other"); }
TEST(Cli, JsonFileForASuite) { expect_usage_error({"--suite=raschka", "--out=x.json"}, "single configuration"); }
TEST(Cli, RowsOfASuiteAreAList) {
  EXPECT_EQ(parse({"--suite=one_at_a_time", "--rows=0,3"}).rows, (std::vector<size_t>{0, 3}));
  EXPECT_TRUE(parse({"--suite=one_at_a_time"}).rows.empty());
  expect_usage_error({"--suite=one_at_a_time", "--rows=first"}, "--rows");
}
TEST(Cli, TwoActions) { expect_usage_error({"--list-flags", "--list-presets"}, "exclude each other"); }

}  // namespace
}  // namespace stepwise::ablations
