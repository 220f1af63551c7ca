// A flag with an option, declared in this one file as any flags/<name>.cpp declares one, reaches everything generated
// from the flag table: --help, a suite file's options, a result's config, and the docs' tables the README check
// compares with. It is a binary of its own (stepwise_throwaway_flag_tests), so the real table the other tests check
// stays as it is.
#include "ablations/command_line/cli.h"
#include "ablations/command_line/resolve.h"
#include "ablations/command_line/startup_table.h"
#include "ablations/flag_table/flag_docs.h"
#include "ablations/flag_table/flags.h"
#include "ablations/run/plan.h"
#include "ablations/run/result_document.h"
#include "ablations/run/suite.h"
#include "tests/ablations/command_line/command_line_support.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace stepwise::ablations {
namespace {

// The declaration, as a flag file holds it. It switches nothing; its options (an integer and a choice) borrow
// max_batch's probe bound and pinned_memory's copy mode as the fields they set, which is all a test of the plumbing
// needs.
const FlagRegistration throwaway({
    .name = "throwaway",
    .position = 1000,
    .summary = "a flag declared by a test, switching nothing",
    .reference = "no flag at all",
    .stage = "test",
    .code = {"tests/ablations/flag_table/throwaway_flag_test.cpp"},
    .apply = [](bench::RunConfig&) {},
    .options = {positive_option(
                    "throwaway_rows", "rows", [](auto& c) -> auto& { return c.max_batch_limit; },
                    "with throwaway: rows it would use", "none")
                    .in_suite_files(),
                choice_option(
                    "throwaway_mode", bench::kPinnedModeNames, [](auto& c) -> auto& { return c.pinned_mode; },
                    "with throwaway: how it would copy")},
});

using testing::parse;

TEST(ThrowawayFlag, IsInTheTableAfterTheRealFlags) {
  ASSERT_FALSE(flag_table().empty());
  EXPECT_EQ(flag_table().back()->name, "throwaway");
  EXPECT_EQ(flag_names().front(), "dynamic_mask") << "the real flags keep their order";
}

TEST(ThrowawayFlag, ItsOptionIsInHelpWithTheFlagsOptions) {
  ::testing::internal::CaptureStdout();
  EXPECT_THROW(parse({"--help"}), HelpRequested);
  const auto help = ::testing::internal::GetCapturedStdout();
  const auto option = help.find("--throwaway-rows");
  ASSERT_NE(option, std::string::npos) << help;
  EXPECT_LT(help.find("Flags and their options:"), option);
  EXPECT_GT(help.find("Model and training:"), option);
  EXPECT_NE(help.find("with throwaway: rows it would use (default: the suite's, else none)"), std::string::npos);
  EXPECT_NE(help.find("--throwaway-mode"), std::string::npos) << "the choice too";
  EXPECT_NE(help.find("throwaway - a flag declared by a test, switching nothing"), std::string::npos)
      << "--enable lists it";
}

TEST(ThrowawayFlag, ItsOptionFromTheCommandLineReachesTheRunAndTheResult) {
  auto r = parse({"--enable=throwaway", "--throwaway-rows=12", "--device=cpu", "--preset=tiny"});
  EXPECT_EQ(r.enable, std::vector<std::string>{"throwaway"});
  const auto suite = single_configuration(r.enable, true);
  resolve_run(r, suite);
  EXPECT_EQ(r.run.max_batch_limit, 12);
  const auto planned = plan_suite(suite, r.run);
  ASSERT_EQ(planned.size(), 2u);
  const RunContext context{"run", nlohmann::json::object(), nullptr};
  const auto on = result_document(context, suite, planned[1], "libtorch", nullptr, {});
  EXPECT_EQ(on["config"]["throwaway_rows"], 12);
  const auto off = result_document(context, suite, planned[0], "libtorch", nullptr, {});
  ASSERT_TRUE(off["config"].contains("throwaway_rows"));
  EXPECT_TRUE(off["config"]["throwaway_rows"].is_null()) << "null while the flag is off";
  EXPECT_EQ(on["flags_info"].back()["name"], "throwaway");
}

// Both options, from the one declaration, reach the startup table, the one serialiser's config (a result's `config`
// and, verbatim, the Python rows' request: bench/python/python_step.cpp), and the declaration as data that
// scripts/dev/results_schema.py turns into the schema's entries (--list-flags --json): no other file names them.
TEST(ThrowawayFlag, ItsOptionsReachTheStartupTableTheConfigTheRequestAndTheSchema) {
  auto r = parse(
      {"--enable=throwaway", "--throwaway-rows=12", "--throwaway-mode=blocking", "--device=cpu", "--preset=tiny"});
  const auto suite = single_configuration(r.enable, true);
  resolve_run(r, suite);
  const auto planned = plan_suite(suite, r.run);
  ASSERT_EQ(planned.size(), 2u);
  const auto table = startup_table(suite, r.run, planned, nlohmann::json::object(), "out");
  EXPECT_NE(table.find("throwaway_rows=12, throwaway_mode=blocking"), std::string::npos) << table;

  const auto config = config_json(planned[1]);
  EXPECT_EQ(config["throwaway_rows"], 12);
  EXPECT_EQ(config["throwaway_mode"], "blocking");
  EXPECT_EQ(config["flags"], nlohmann::json::array({"throwaway"}));
  const RunContext context{"run", nlohmann::json::object(), nullptr};
  auto recorded = result_document(context, suite, planned[1], "libtorch", nullptr, {})["config"];
  recorded.erase("settings_hash");
  EXPECT_EQ(recorded, config) << "a result's config is the request's";

  const auto declared = flag_table().back()->options;
  ASSERT_EQ(declared.size(), 2u);
  const auto rows = declared[0].describe(), mode = declared[1].describe();
  EXPECT_EQ(rows["name"], "throwaway_rows");
  EXPECT_EQ(rows["type"], "integer");
  EXPECT_EQ(rows["minimum"], 1);
  EXPECT_EQ(mode["name"], "throwaway_mode");
  EXPECT_EQ(mode["enum"], nlohmann::json::array({"async", "blocking"}));
  EXPECT_TRUE(rows["in_results"].get<bool>() && mode["in_results"].get<bool>());
}

TEST(ThrowawayFlag, ASuiteFileMaySetItsOptionAndTheCommandLineWins) {
  const auto path =
      std::filesystem::temp_directory_path() / ("stepwise-throwaway-" + std::to_string(getpid()) + ".json");
  std::ofstream(path) << R"({"kind": "one_at_a_time", "flags": ["throwaway"],
                             "options": {"throwaway_rows": {"cpu": "3", "cuda": "5"}}})";
  const Suite suite = load_suite(path);
  std::filesystem::remove(path);
  auto r = parse({"--device=cpu", "--preset=tiny"});
  resolve_run(r, suite);
  EXPECT_EQ(r.run.max_batch_limit, 3) << "the suite's choice for a CPU";
  auto given = parse({"--device=cpu", "--preset=tiny", "--throwaway-rows=7"});
  resolve_run(given, suite);
  EXPECT_EQ(given.run.max_batch_limit, 7);
  std::ofstream(path) << R"({"kind": "one_at_a_time", "options": {"throwaway_rows": "0"}})";
  try {
    load_suite(path);
    FAIL() << "a bad value must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("option 'throwaway_rows': must be a positive integer (got '0')"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove(path);
}

TEST(ThrowawayFlag, TheDocsTablesTheReadmeCheckUsesHaveItsRows) {
  EXPECT_NE(flags_markdown().find("| `throwaway` | a flag declared by a test, switching nothing | no flag at all | "
                                  "cpu+cuda |\n"),
            std::string::npos)
      << flags_markdown();
  EXPECT_NE(flag_options_markdown().find("| `--throwaway-rows` | `throwaway` | rows | none | `throwaway_rows` | with "
                                         "throwaway: rows it would use |\n"),
            std::string::npos)
      << flag_options_markdown();
}

}  // namespace
}  // namespace stepwise::ablations
