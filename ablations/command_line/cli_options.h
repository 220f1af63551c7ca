// The ./ablate command line's options, one function per section of --help (in the order it prints them), each
// option bound to the Request field it sets or, where the command line still has to be read together (the flag
// lists, the old names, the actions), to CommandLine; the flags' own options come from the flag table.
// parse_command_line (ablations/command_line/cli.cpp) builds the app from these and reads the result.
#pragma once

#include "ablations/command_line/cli.h"
#include "ablations/flag_table/flag_option.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <deque>
#include <optional>
#include <string>

namespace stepwise::ablations {

// What the command line gave that becomes a Request only once read together: the flag lists, the implementations,
// the options under their old names, the actions, and each flag option as given.
struct CommandLine {
  std::string enable, disable, implementations = "libtorch";
  bool describe = false, list_flags = false, list_presets = false, list_suites = false, no_progress = false;
  std::optional<size_t> old_steps;   // --steps, the old name of --min-steps
  std::optional<int64_t> old_seeds;  // --seeds, the old name of --target-seeds
  // A flag's option on the command line: its value as given, checked by the option's own parser.
  struct FlagOptionGiven {
    const FlagOption* option = nullptr;
    CLI::Option* cli = nullptr;
    std::string text = {};
    bool on = false;  // a switch's value
  };
  std::deque<FlagOptionGiven> flag_options;
};

// CLI11 hides this group's options from --help; the unknown-option message leaves them out too.
inline constexpr const char* kInternalGroup = "";

void add_flag_options(CLI::App& app, Request& r, CommandLine& line);         // what runs, how each flag acts
void add_model_options(CLI::App& app, Request& r);                           // the model and its training
void add_measurement_options(CLI::App& app, Request& r, CommandLine& line);  // how a step is measured
void add_data_options(CLI::App& app, Request& r);                            // the tokens
void add_target_options(CLI::App& app, Request& r, CommandLine& line);       // time to a target loss
void add_budget_search_options(CLI::App& app, Request& r);                   // --find-budget and its grid
void add_distributed_options(CLI::App& app, Request& r);                     // data parallel
void add_output_options(CLI::App& app, Request& r, CommandLine& line);       // where results go
void add_listing_options(CLI::App& app, Request& r, CommandLine& line);      // print and run nothing
void add_internal_options(CLI::App& app, Request& r);                        // how ablate starts its children

}  // namespace stepwise::ablations
