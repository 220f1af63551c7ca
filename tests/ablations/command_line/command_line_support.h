// How the ablations tests give ./ablate a command line and expect it refused: one copy of the argv plumbing and of
// the usage-error check, which every command-line test needs.
#pragma once

#include "ablations/command_line/cli.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace stepwise::testing {

// `args` as ./ablate's command line (argv[0] added), parsed as main parses it.
inline ablations::Request parse(std::vector<std::string> args) {
  args.insert(args.begin(), "ablate");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return ablations::parse_command_line(static_cast<int>(argv.size()), argv.data());
}

// `read(args)` (a parse, or a parse and a resolve) refuses `args` with a UsageError whose message holds `fragment`.
template <class Read>
void expect_usage_error(Read&& read, std::vector<std::string> args, const std::string& fragment) {
  try {
    read(std::move(args));
    FAIL() << "expected a usage error containing " << fragment;
  } catch (const ablations::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

}  // namespace stepwise::testing
