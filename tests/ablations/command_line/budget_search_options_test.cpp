// --find-budget's options: their own section of --help, the grid resolved against the step cap, each bad combination
// a usage error naming the fix; and the startup table naming the schedule each row trains on (the trapezoid's where a
// row runs it, not the run's cosine).
#include "ablations/command_line/cli.h"
#include "ablations/command_line/resolve.h"
#include "ablations/command_line/startup_table.h"
#include "ablations/run/plan.h"
#include "tests/ablations/command_line/command_line_support.h"

#include <gtest/gtest.h>

namespace stepwise::ablations {
namespace {

using testing::parse;

Request resolved(std::vector<std::string> args, const Suite& suite = single_configuration({}, false)) {
  args.insert(args.begin(), "--device=cpu");
  auto r = parse(std::move(args));
  resolve_run(r, suite);
  return r;
}

void expect_usage_error(std::vector<std::string> args, const std::string& fragment) {
  testing::expect_usage_error([](auto a) { return resolved(std::move(a)); }, std::move(args), fragment);
}

const std::vector<std::string> kTarget{"--preset=tiny", "--target-loss=2.8", "--max-steps=400"};

std::vector<std::string> with(std::vector<std::string> args) {
  args.insert(args.begin(), kTarget.begin(), kTarget.end());
  return args;
}

TEST(BudgetSearchOptions, HaveTheirOwnSectionOfHelp) {
  ::testing::internal::CaptureStdout();
  EXPECT_THROW(parse({"--help"}), HelpRequested);
  const auto help = ::testing::internal::GetCapturedStdout();
  const auto section = help.find("Budget search:");
  ASSERT_NE(section, std::string::npos) << help;
  for (const char* option :
       {"--find-budget", "--budget-grid", "--budget-first", "--budget-ratio", "--budget-last", "--budget-branches"})
    EXPECT_GT(help.find(option, section), section) << option << " outside the section";
}

TEST(BudgetSearchOptions, TheGridIsGeometricToTheStepCapOrAsGiven) {
  const auto r = resolved(with({"--find-budget"}));
  EXPECT_EQ(r.budget_search.resolved, (std::vector<int64_t>{40, 60, 90, 135, 203, 304, 400}));
  EXPECT_EQ(r.budget_search.resolved_from, "geometric from 40 at ratio 1.5 to 400 (--max-steps)");
  // The schedules resolve on the grid's longest budget; every probe then sets its own.
  EXPECT_EQ(r.run.target->step_budget, 400);
  EXPECT_TRUE(r.run.target->record_rule);
  const auto given = resolved(with({"--find-budget", "--budget-grid=50,100,200"}));
  EXPECT_EQ(given.budget_search.resolved, (std::vector<int64_t>{50, 100, 200}));
  const auto shaped = resolved(with({"--find-budget", "--budget-first=20", "--budget-ratio=2", "--budget-last=300"}));
  EXPECT_EQ(shaped.budget_search.resolved, (std::vector<int64_t>{20, 40, 80, 160, 300}));
}

TEST(BudgetSearchOptions, EachBadCombinationIsAUsageErrorNamingTheFix) {
  expect_usage_error({"--preset=tiny", "--find-budget"}, "add --target-loss");
  expect_usage_error({"--preset=tiny", "--target-loss=2.8", "--find-budget"}, "give --max-steps");
  expect_usage_error(with({"--find-budget", "--step-budget=300"}), "leave --step-budget out");
  expect_usage_error(with({"--find-budget", "--budget-grid=50,500"}), "beyond --max-steps=400");
  expect_usage_error(with({"--find-budget", "--budget-last=500"}), "within --max-steps=400");
  expect_usage_error(with({"--find-budget", "--budget-grid=100,50"}), "ascending");
  expect_usage_error(with({"--find-budget", "--budget-grid=50,100", "--budget-ratio=2"}), "--budget-grid names");
  expect_usage_error(with({"--budget-first=20"}), "add --find-budget");
  expect_usage_error(with({"--find-budget", "--implementations=libtorch,python-eager"}), "drop --implementations");
  expect_usage_error(with({"--find-budget", "--out=x.json"}), "give --out a directory");
  expect_usage_error(with({"--find-budget", "--budget-ratio=1"}), "a ratio above 1");
  expect_usage_error(with({"--find-budget", "--budget-branches=maybe"}), "--budget-branches");
}

TEST(StartupTable, NamesTheScheduleEachRowTrainsOn) {
  // --enable=trapezoid on a target run: the result records the trapezoid, and so must the table (it used to print
  // the run's cosine).
  const auto single = single_configuration({"trapezoid"}, false);
  auto r = resolved(
      {"--preset=tiny", "--enable=trapezoid", "--target-loss=2.8", "--max-steps=600", "--step-budget=300"}, single);
  const auto planned = plan_suite(single, r.run);
  const auto table = startup_table(single, r.run, planned, nlohmann::json::object(), "out");
  EXPECT_NE(table.find("trapezoid: warm-up 0 steps, flat, linear cool-down over the last 120 of 300 steps"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("cosine"), std::string::npos) << table;
  // A suite whose baseline decays on the cosine and whose other rows on the trapezoid names both, with their rows.
  const auto speedrun = find_suite("speedrun");
  auto s = resolved({"--preset=tiny", "--target-loss=2.8", "--max-steps=600"}, speedrun);
  const auto rows = startup_table(speedrun, s.run, plan_suite(speedrun, s.run), nlohmann::json::object(), "out");
  EXPECT_NE(rows.find("cosine: warm-up 0 steps, decay to 0.10 x lr by step 300 (row 0); trapezoid: warm-up 0 steps, "
                      "flat, linear cool-down over the last 120 of 300 steps (rows 1-4)"),
            std::string::npos)
      << rows;
}

}  // namespace
}  // namespace stepwise::ablations
