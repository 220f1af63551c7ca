// Suite files (ablations/suites/*.json) are declared, not scripted: this reads one, checks it names real flags and
// options, and expands the generated kinds (one at a time, leave one out) into their rows.
#include "ablations/run/suite.h"

#include "ablations/flag_table/flags.h"
#include "bench/source_dir.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <stdexcept>

namespace stepwise::ablations {

namespace {

// Checked by the option's own parser as the file is read, so a bad value is the suite file's error, named with the
// file; kept as written, for ablations/command_line/resolve.cpp to apply under the command line's.
void set_option(OptionValues& values, const FlagOption& option, const std::string& value) {
  bench::RunConfig scratch;
  option.set(scratch, value);
  values[option.name] = value;
}

std::invalid_argument suite_error(const std::filesystem::path& path, const std::string& what) {
  return std::invalid_argument("suite " + path.string() + ": " + what);
}

std::string plus_joined(const std::vector<std::string>& flags) {
  std::string out;
  for (const auto& f : flags) out += (out.empty() ? "" : "+") + f;
  return out;
}

std::vector<std::string> flag_list(const nlohmann::json& j, const std::filesystem::path& path, const char* key) {
  if (!j.contains(key)) return {};
  if (!j[key].is_array()) throw suite_error(path, std::string("'") + key + "' must be a list of flag names");
  std::vector<std::string> names;
  for (const auto& n : j[key]) {
    if (!n.is_string()) throw suite_error(path, std::string("'") + key + "' must hold flag names");
    names.push_back(n.get<std::string>());
  }
  try {
    return in_table_order(names);
  } catch (const std::invalid_argument& e) {
    throw suite_error(path, e.what());
  }
}

// A suite file from before the rename: its configurations were under "steps", a word that now means only the engine's
// training step.
void refuse_old_rows_key(const nlohmann::json& j, const std::filesystem::path& path) {
  if (j.contains("steps") && !j.contains("rows"))
    throw suite_error(path, "'steps' is now 'rows' (a suite's configurations are its rows): rename the key");
}

void expand_cumulative(Suite& suite, const nlohmann::json& j, const std::filesystem::path& path) {
  refuse_old_rows_key(j, path);
  if (!j.contains("rows") || !j["rows"].is_array() || j["rows"].empty())
    throw suite_error(path, "a cumulative suite needs a non-empty 'rows' list");
  std::vector<std::string> current = flag_list(j, path, "base");
  for (const auto& row : j["rows"]) {
    if (!row.contains("label") || !row["label"].is_string()) throw suite_error(path, "every row needs a 'label'");
    auto added = flag_list(row, path, "add");
    if (added.empty() && !suite.rows.empty())
      throw suite_error(path, "row '" + row["label"].get<std::string>() + "' adds no flag");
    for (const auto& f : added) {
      if (std::find(current.begin(), current.end(), f) != current.end())
        throw suite_error(path, "row '" + row["label"].get<std::string>() + "' adds '" + f + "' twice");
      current.push_back(f);
    }
    current = in_table_order(current);
    suite.rows.push_back({row["label"].get<std::string>(), current, added, {}});
  }
}

// A key only another kind reads would be ignored without a word: a one_at_a_time file with rows of its own ran every
// flag instead of them. Generated kinds take "flags" (the flags swept), written ones "rows".
void refuse_other_kinds_key(const nlohmann::json& j, const std::filesystem::path& path, SuiteKind kind) {
  const bool generated = kind == SuiteKind::OneAtATime || kind == SuiteKind::LeaveOneOut;
  const char* key = generated ? "rows" : "flags";
  if (!j.contains(key)) return;
  throw suite_error(path, generated ? "a " + to_string(kind) +
                                          " suite makes its rows from 'flags' (default: all), so 'rows' would be "
                                          "ignored: for rows of your own, use kind cumulative or matrix"
                                    : "'flags' is what a generated suite (one_at_a_time, leave_one_out) sweeps; a " +
                                          to_string(kind) + " suite's rows name their own flags");
}

std::vector<std::string> swept_flags(const nlohmann::json& j, const std::filesystem::path& path) {
  if (!j.contains("flags") || j["flags"] == "all") return all_flag_names();
  return flag_list(j, path, "flags");
}

void expand_one_at_a_time(Suite& suite, const nlohmann::json& j, const std::filesystem::path& path) {
  suite.rows.push_back({"baseline", {}, {}, {}});
  for (const auto& f : swept_flags(j, path)) suite.rows.push_back({f, {f}, {f}, {}});
}

void expand_leave_one_out(Suite& suite, const nlohmann::json& j, const std::filesystem::path& path) {
  const auto all = swept_flags(j, path);
  // The all-off baseline comes first so the loss check and "x baseline" have the same reference everywhere.
  suite.rows.push_back({"baseline", {}, {}, {}});
  suite.rows.push_back({"all flags", all, all, {}});
  for (const auto& f : all) {
    std::vector<std::string> rest;
    for (const auto& g : all)
      if (g != f) rest.push_back(g);
    suite.rows.push_back({"all - " + f, rest, {}, {f}});
  }
}

void expand_matrix(Suite& suite, const nlohmann::json& j, const std::filesystem::path& path) {
  refuse_old_rows_key(j, path);
  if (!j.contains("rows") || !j["rows"].is_array() || j["rows"].empty())
    throw suite_error(path, "a matrix suite needs a non-empty 'rows' list");
  for (const auto& row : j["rows"]) {
    if (!row.contains("label") || !row["label"].is_string()) throw suite_error(path, "every row needs a 'label'");
    const auto label = row["label"].get<std::string>();
    auto flags = flag_list(row, path, "flags");
    if (suite.rows.empty() && !flags.empty())
      throw suite_error(path, "the first row '" + label + "' is the baseline: it names no flag");
    if (!suite.rows.empty() && flags.empty()) throw suite_error(path, "row '" + label + "' names no flag");
    suite.rows.push_back({label, flags, flags, {}});
  }
}

}  // namespace

std::string to_string(SuiteKind k) { return kSuiteKindNames.to_string(k); }

Suite load_suite(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw suite_error(path, "cannot be read");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw suite_error(path, std::string("not valid JSON: ") + e.what());
  }
  Suite suite;
  suite.name = j.value("name", path.stem().string());
  suite.description = j.value("description", "");
  suite.source = j.value("source", "");
  const nlohmann::json options = j.value("options", nlohmann::json::object());
  for (const auto& [key, value] : options.items()) {
    const auto found = find_option(key);
    if (!found || !found->option->in_suites) {
      std::string valid;
      for (const auto& name : suite_option_names()) valid += (valid.empty() ? "" : ", ") + name;
      throw suite_error(path, "unknown option '" + key + "' (valid: " + valid + ")");
    }
    const FlagOption& option = *found->option;
    if (value.is_string()) {
      try {
        set_option(suite.options, option, value.get<std::string>());
      } catch (const std::invalid_argument& e) {
        throw suite_error(path, "option '" + key + "': " + e.what());
      }
      continue;
    }
    if (!value.is_object() || value.empty())
      throw suite_error(path, "option '" + key +
                                  "' must be a string, or an object with a string per device kind "
                                  "({\"cuda\": ..., \"cpu\": ...})");
    for (const auto& [kind, per_device] : value.items()) {
      if (kind != "cuda" && kind != "cpu")
        throw suite_error(path, "option '" + key + "': unknown device kind '" + kind + "' (valid: cuda, cpu)");
      if (!per_device.is_string()) throw suite_error(path, "option '" + key + "." + kind + "' must be a string");
      try {
        set_option(suite.device_options[kind], option, per_device.get<std::string>());
      } catch (const std::invalid_argument& e) {
        throw suite_error(path, "option '" + key + "." + kind + "': " + e.what());
      }
    }
  }
  const nlohmann::json budgets = j.value("step_budget", nlohmann::json::object());
  for (const auto& [preset, steps] : budgets.items()) {
    if (!steps.is_number_integer() || steps.get<int64_t>() < 1)
      throw suite_error(path, "step_budget." + preset + " must be a positive integer (steps)");
    suite.step_budget[preset] = steps.get<int64_t>();
  }
  try {
    suite.kind = kSuiteKindNames.from_string(j.value("kind", ""));
  } catch (const std::invalid_argument& e) {
    throw suite_error(path, e.what());
  }
  refuse_other_kinds_key(j, path, suite.kind);
  switch (suite.kind) {
    case SuiteKind::Cumulative: expand_cumulative(suite, j, path); break;
    case SuiteKind::OneAtATime: expand_one_at_a_time(suite, j, path); break;
    case SuiteKind::LeaveOneOut: expand_leave_one_out(suite, j, path); break;
    case SuiteKind::Matrix: expand_matrix(suite, j, path); break;
  }
  // An option of a flag none of the rows asks for would change nothing and say nothing (the command line's rule,
  // ablations/command_line/resolve.cpp).
  for (const auto& [key, value] : options.items())
    if (const auto found = find_option(key);
        found && !found->option->acts_while_off && !some_row_runs(suite, found->flag->name))
      throw suite_error(path, "option '" + key + "' is the " + std::string(found->flag->name) +
                                  " flag's, which none of its rows enables: add the flag to a row or drop the option");
  return suite;
}

bool some_row_runs(const Suite& suite, std::string_view flag) {
  return std::any_of(suite.rows.begin(), suite.rows.end(), [&](const SuiteRow& row) {
    return std::find(row.flags.begin(), row.flags.end(), flag) != row.flags.end();
  });
}

std::filesystem::path suites_dir() { return bench::source_dir() / "ablations" / "suites"; }

std::vector<std::string> suite_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(suites_dir(), ec))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

Suite find_suite(const std::string& name_or_path) {
  if (name_or_path.size() > 5 && name_or_path.ends_with(".json")) return load_suite(name_or_path);
  const auto path = suites_dir() / (name_or_path + ".json");
  if (!std::filesystem::exists(path)) {
    std::string valid;
    for (const auto& n : suite_names()) valid += (valid.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown suite '" + name_or_path + "' (valid: " + valid + ", or a path to a .json)");
  }
  return load_suite(path);
}

Suite single_configuration(const std::vector<std::string>& flags, bool with_baseline) {
  Suite s;
  s.name = "single";
  s.kind = SuiteKind::OneAtATime;
  if (with_baseline) s.rows.push_back({"baseline", {}, {}, {}});
  s.first_is_baseline = with_baseline || flags.empty();
  s.rows.push_back({flags.empty() ? "baseline" : plus_joined(flags), flags, flags, {}});
  return s;
}

}  // namespace stepwise::ablations
