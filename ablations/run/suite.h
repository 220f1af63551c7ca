// Suites: ordered lists of configurations, read from small JSON files in ablations/suites/.
#pragma once

#include "ablations/flag_table/flag_option.h"
#include "model/enum_names.h"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stepwise::ablations {

// Matrix: each row names its whole flag set, held against the all-off baseline that comes first (the memory suite:
// each memory flag alone, both, each with max_batch).
enum class SuiteKind { Cumulative, OneAtATime, LeaveOneOut, Matrix };
inline constexpr auto kSuiteKindNames = model::enum_names<SuiteKind>("kind", {{SuiteKind::Cumulative, "cumulative"},
                                                                              {SuiteKind::OneAtATime, "one_at_a_time"},
                                                                              {SuiteKind::LeaveOneOut, "leave_one_out"},
                                                                              {SuiteKind::Matrix, "matrix"}});
std::string to_string(SuiteKind k);

// One row of a suite: one configuration, measured by each implementation. (A suite file's "rows"; a training step is
// something else: the unit the engine times.)
struct SuiteRow {
  std::string label;
  std::vector<std::string> flags;    // the full set requested at this row, in flag-table order
  std::vector<std::string> added;    // relative to the previous row (cumulative) or the baseline
  std::vector<std::string> removed;  // leave-one-out: the flag left out
};

struct Suite {
  std::string name, description, source;
  SuiteKind kind = SuiteKind::Cumulative;
  // Defaults for how flags act, for the flag options a suite file may set (ablations/flag_table/flag_option.h);
  // explicit command-line options win. A suite file gives a value for every device ("pure") or one per device kind
  // ({"cuda": "flash", "cpu": "auto"}): the latter wins on that kind. Each value is checked as the suite is read.
  OptionValues options;
  std::map<std::string, OptionValues> device_options;  // "cuda" or "cpu" -> its own choices
  std::vector<SuiteRow> rows;
  // The suite's own horizon per preset ("step_budget": {"tiny": 150}): the step budget its rows train every seed to
  // and are judged at when --target-loss runs without --step-budget, so a schedule that decays over the run's length
  // ends where every row's seeds stop (bench::TargetOptions::step_budget).
  std::map<std::string, int64_t> step_budget;
  // rows[0] is the baseline every other row's loss is checked against and "x baseline" divides by; false only
  // for a lone configuration run without --vs-baseline.
  bool first_is_baseline = true;

  // Every row's label, in order: each result carries them so a report can name what a run is missing.
  std::vector<std::string> labels() const {
    std::vector<std::string> out;
    for (const auto& r : rows) out.push_back(r.label);
    return out;
  }
};

// Whether some row of the suite asks for `flag`.
bool some_row_runs(const Suite& suite, std::string_view flag);

// Reads and expands a suite file. Throws std::invalid_argument naming the file and the problem (unknown flag,
// unknown kind or option, a cumulative step that adds nothing, malformed JSON).
Suite load_suite(const std::filesystem::path& path);

// The directory of the built-in suites, and their names.
std::filesystem::path suites_dir();
std::vector<std::string> suite_names();
// A built-in name or a path to a .json file; throws std::invalid_argument naming the valid suites.
Suite find_suite(const std::string& name_or_path);

// A single configuration (./ablate --enable=...) as a one- or two-step list, so it runs like a suite.
Suite single_configuration(const std::vector<std::string>& flags, bool with_baseline);

}  // namespace stepwise::ablations
