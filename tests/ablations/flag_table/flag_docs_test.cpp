// The README's flag table and docs/flags.md's option table are the generated ones (./ablate --list-flags --markdown
// prints both), so a flag or an option changed in its declaration and not in the docs fails here.
#include "ablations/flag_table/flag_docs.h"
#include "bench/source_dir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace stepwise::ablations {
namespace {

std::string read(const std::string& relative) {
  std::ifstream in(bench::source_dir() / relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(FlagDocs, TheReadmesFlagTableIsGenerated) {
  EXPECT_NE(read("README.md").find(flags_markdown()), std::string::npos)
      << "README.md's flag table differs from the flag table; ./ablate --list-flags --markdown prints it:\n"
      << flags_markdown();
}

TEST(FlagDocs, TheFlagsOptionTableIsGenerated) {
  EXPECT_NE(read("docs/flags.md").find(flag_options_markdown()), std::string::npos)
      << "docs/flags.md's option table differs from the flags' options; ./ablate --list-flags --markdown prints it:\n"
      << flag_options_markdown();
}

TEST(FlagDocs, EveryFlagAndOptionHasItsRow) {
  const auto flags = flags_markdown(), options = flag_options_markdown();
  for (const char* row : {"| `dynamic_mask` |", "| `zero1` |"}) EXPECT_NE(flags.find(row), std::string::npos) << row;
  for (const char* row :
       {"| `--bf16-mode` | `bf16` | `pure`, `autocast` | `pure` | `bf16_mode` |",
        "| `--max-batch-limit` | `max_batch` | a batch |", "| `--fp8-head` | `fp8` | (a switch) | off | no |"})
    EXPECT_NE(options.find(row), std::string::npos) << row << "\n" << options;
}

}  // namespace
}  // namespace stepwise::ablations
