// The ./ablate command line (CLI11): what was asked, before it is resolved against the device.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stepwise::ablations {

struct Request {
  enum class Action { Run, Describe, ListFlags, ListPresets, ListSuites };
  Action action = Action::Run;

  std::vector<std::string> enable, disable;  // parsed, in flag-table order
  std::string suite;                         // empty: a single configuration
  bool vs_baseline = false;

  std::optional<std::string> preset;
  std::string device = "auto";
  std::optional<int64_t> batch_size, seq_len;
  std::optional<int64_t> warmup, min_steps, max_steps;
  std::optional<double> max_noise, max_time_s;
  std::string host_sync = "lagged";
  uint64_t seed = 123;
  double lr = 5e-4;
  std::optional<std::string> data;
  std::string data_format = "auto";
  std::optional<std::string> out;
  std::optional<std::string> run_id;  // shared by the suites of one ./run_all.sh

  // How flags act; unset = the suite's choice, else the defaults.
  std::optional<std::string> bf16_mode, pinned_mode, sdpa_backend;
  std::string adamw_baseline = "reference";
  int64_t max_batch_limit = 0;

  bool trace = false;
  int nproc_per_node = 1;
  double dist_timeout_s = 300;  // rendezvous and collectives: a rank that is gone fails the run after this
  bool json = false;      // --list-flags / --list-presets / --describe as JSON
  bool progress = true;   // --no-progress silences the progress line
};

// Parses argv. Usage errors (unknown option, bad value, conflicting flags) throw UsageError with the message;
// --help prints and throws HelpRequested.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct HelpRequested {};

Request parse_command_line(int argc, char** argv);

}  // namespace stepwise::ablations
