// parse_command_line: the options (ablations/command_line/cli_options.h) parsed into a Request, then what needs several
// of them at once: the flag lists, the old names, the actions, and the cross-option checks that need no device (the
// rest live in ablations/command_line/resolve.cpp).
#include "ablations/command_line/cli.h"

#include "ablations/command_line/cli_options.h"
#include "ablations/flag_table/flags.h"
#include "bench/python/python_step.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <sstream>

namespace stepwise::ablations {

namespace {

// An option under its new name and its old one (--min-steps, --steps): either may be given, not both.
template <typename T>
void take_renamed(std::optional<T>& target, std::optional<T>& old, const char* name, const char* old_name) {
  if (!old) return;
  if (target) throw UsageError(std::string(old_name) + " is the old name of " + name + ": give one of them, not both");
  target = old;
}

// --find-budget's options, with each other and with what a search cannot take (the device-free checks; the grid
// itself is resolved against --max-steps in ablations/command_line/resolve.cpp).
void check_budget_search(const Request& r) {
  const auto& b = r.budget_search;
  const bool shaped = !b.grid.empty() || b.first || b.ratio || b.last || !b.branches;
  if (!b.on) {
    if (shaped)
      throw UsageError(
          "--budget-grid, --budget-first, --budget-ratio, --budget-last and --budget-branches shape the budget "
          "search: add --find-budget");
    return;
  }
  if (!r.target.loss)
    throw UsageError(
        "--find-budget searches the budget at which each row's loss is below a target: add --target-loss "
        "(and --max-steps, the grid's bound)");
  if (r.target.step_budget)
    throw UsageError("--find-budget sets each probe's horizon to a budget of its grid: leave --step-budget out");
  if (!b.grid.empty() && (b.first || b.ratio || b.last))
    throw UsageError("--budget-grid names every budget: leave --budget-first, --budget-ratio and --budget-last out");
  if (!std::is_sorted(b.grid.begin(), b.grid.end()) || std::adjacent_find(b.grid.begin(), b.grid.end()) != b.grid.end())
    throw UsageError("--budget-grid must be ascending without repeats (got " + [&] {
      std::string s;
      for (const auto n : b.grid) s += (s.empty() ? "" : ",") + std::to_string(n);
      return s;
    }() + ")");
  if (r.implementations != std::vector<std::string>{"libtorch"})
    throw UsageError("--find-budget trains the engine's rows only: drop --implementations");
  if (!r.sweep.empty()) throw UsageError("--find-budget and --sweep exclude each other: search one point at a time");
  if (r.resume) throw UsageError("--find-budget starts its search afresh: drop --resume");
  if (!r.rows.empty()) throw UsageError("--find-budget searches every row against the baseline: drop --rows");
  if (r.out && r.out->ends_with(".json"))
    throw UsageError("--find-budget writes budget.json and a folder per budget: give --out a directory");
}

}  // namespace

Request parse_command_line(int argc, char** argv) {
  Request r;
  CommandLine line;
  CLI::App app{
      "stepwise: measure what each GPT training-speed optimization buys on this machine.\n"
      "  ./ablate --enable=bf16,flash          one configuration\n"
      "  ./ablate --suite=raschka              a suite (see --list-suites)\n"
      "  ./ablate --describe --preset=NAME     a model's size and FLOPs\n"
      "  ./ablate --suite=speedrun --target-loss=L --max-steps=M --find-budget   each row's N",
      "ablate"};
  app.get_formatter()->column_width(34);
  add_flag_options(app, r, line);
  add_model_options(app, r);
  add_measurement_options(app, r, line);
  add_data_options(app, r);
  add_target_options(app, r, line);
  add_budget_search_options(app, r);
  add_distributed_options(app, r);
  add_output_options(app, r, line);
  add_listing_options(app, r, line);
  add_internal_options(app, r);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    throw HelpRequested{};
  } catch (const CLI::ExtrasError& e) {
    std::string valid;
    for (const auto* option : app.get_options())
      if (option->get_group() != kInternalGroup && !option->get_lnames().empty())
        valid += (valid.empty() ? "--" : ", --") + option->get_lnames().front();
    throw UsageError(std::string(e.what()) + " (valid options: " + valid + ")");
  } catch (const CLI::ParseError& e) {
    // "--steps: must be a positive integer (got '0')" reads better as one sentence.
    std::string what = e.what();
    if (const auto colon = what.find(": must be "); colon != std::string::npos) what.erase(colon, 1);
    throw UsageError(what);
  }

  r.progress = !line.no_progress;
  take_renamed(r.timing.min_steps, line.old_steps, "--min-steps", "--steps");
  take_renamed(r.target.seeds, line.old_seeds, "--target-seeds", "--seeds");
  for (const auto& entry : line.flag_options)
    if (entry.cli->count() > 0)
      r.flag_options[entry.option->name] = entry.option->is_switch ? (entry.on ? "true" : "false") : entry.text;
  const int actions = line.describe + line.list_flags + line.list_presets + line.list_suites;
  if (actions > 1) throw UsageError("--describe, --list-flags, --list-presets and --list-suites exclude each other");
  if (line.describe) r.action = Request::Action::Describe;
  if (line.list_flags) r.action = Request::Action::ListFlags;
  if (line.list_presets) r.action = Request::Action::ListPresets;
  if (line.list_suites) r.action = Request::Action::ListSuites;

  try {
    r.implementations.clear();
    std::stringstream list(line.implementations);
    for (std::string name; std::getline(list, name, ',');) {
      bench::check_implementation(name);
      if (std::find(r.implementations.begin(), r.implementations.end(), name) != r.implementations.end())
        throw std::invalid_argument("implementation '" + name + "' is named twice");
      r.implementations.push_back(name);
    }
    r.enable = parse_flag_list(line.enable);
    r.disable = parse_flag_list(line.disable);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  for (const auto& f : r.disable)
    if (std::find(r.enable.begin(), r.enable.end(), f) != r.enable.end() && line.enable != "all")
      throw UsageError("flag '" + f + "' is both enabled and disabled");
  if (!r.suite.empty() && !line.enable.empty())
    throw UsageError("--suite and --enable exclude each other (a suite names its own flags; --disable removes some)");
  if (!r.suite.empty() && r.vs_baseline)
    throw UsageError("--vs-baseline is for a single configuration; a suite always starts with its baseline");
  if (r.resume && r.out) throw UsageError("--resume DIR writes into DIR; drop --out");
  if (r.count_ops && r.trace)
    throw UsageError(
        "--count-ops and --trace both take CUPTI on a GPU (the profiler counts kernels through it): run "
        "them apart");
  if (r.count_ops && r.target.loss)
    throw UsageError("--count-ops counts the steps of a throughput row; drop --target-loss");
  if (r.out && r.out->ends_with(".json") && (!r.suite.empty() || r.vs_baseline))
    throw UsageError("--out FILE.json takes a single configuration; give a directory for a suite or --vs-baseline");
  check_budget_search(r);
  if (line.enable == "all")  // --enable=all --disable=x: everything but x
    std::erase_if(r.enable, [&](const std::string& f) {
      return std::find(r.disable.begin(), r.disable.end(), f) != r.disable.end();
    });
  return r;
}

}  // namespace stepwise::ablations
