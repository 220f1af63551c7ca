// The ./ablate command line (CLI11): what was asked. Its options write straight into the RunConfig every
// configuration starts from; ablations/resolve.h then fills in what the command line left to the device, the preset
// and the suite.
#pragma once

#include "ablations/suite.h"
#include "bench/run_config.h"

#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace stepwise::ablations {

struct Request {
  enum class Action { Run, Describe, ListFlags, ListPresets, ListSuites };
  Action action = Action::Run;

  // The configuration every run starts from: --batch-size, --steps, --seed, --lr, ... write into it directly; so do
  // the model's dimensions (--n-layer, --n-head, --n-embd, --context-length, --vocab-size, --dropout), which
  // ablations/resolve.cpp then lays over the preset's.
  bench::RunConfig run;
  std::set<std::string> given;  // the options the command line named ("--warmup", ...), so defaults fill only the rest

  std::vector<std::string> enable, disable;  // parsed, in flag-table order
  std::string suite;                         // empty: a single configuration
  bool vs_baseline = false;
  std::string device = "auto";
  std::optional<std::string> out;
  std::optional<std::string> run_id;  // shared by the suites of one ./run_all.sh
  std::optional<std::string> resume;  // --resume DIR: finish the run whose results are in DIR
  std::optional<std::string> data;    // --data FILE, GLOB or corpus:NAME; none: the synthetic stream
  // Internal (ablations/execute.h): this process is a child that runs the one row of this index under its own host
  // allocator; it prints the row's lines only.
  std::optional<size_t> row_in_child;
  // --sweep AXIS=v1,v2,... (repeatable; ablations/sweep.h): the suite or configuration at every point of the axes.
  std::vector<std::string> sweep;
  // Internal: this process runs one point of a sweep, whose "sweep" JSON its results carry (as the parent built it).
  std::optional<std::string> sweep_point;

  // How flags act, as given on the command line (unset: not given); the command line wins over the suite's choice,
  // which wins over the default (ablations/resolve.cpp). --host-sync and --data-format write into `run` directly.
  FlagModes modes;
  std::optional<bench::AdamWKind> adamw_baseline;  // unset: auto, what torch.optim.AdamW() picks on the device

  // Who runs each configuration: stepwise's engine and/or PyTorch Python (bench/python/python_step.h), and where.
  std::vector<std::string> implementations{"libtorch"};
  bool implementations_at_ends = false;  // the others only for the baseline and the last configuration

  // --target-loss: time to a target loss instead of step throughput (ablations/resolve.cpp builds the options).
  std::optional<double> target_loss;
  int64_t eval_every = 25, eval_batches = 8, seeds = 3;

  bool trace = false;
  int nproc_per_node = 1;
  double dist_timeout_s = 300;  // rendezvous and collectives: a rank that is gone fails the run after this
  bool dry_run = false;  // --dry-run: resolve and plan the run, print it, run nothing (./run_all.sh plans with it)
  bool json = false;     // --list-flags / --list-presets / --describe / --dry-run as JSON
  bool verbose = false;  // --list-flags --verbose: where each flag's code lives
  bool progress = true;  // --no-progress silences the progress line

  bool has(const std::string& option) const { return given.count(option) > 0; }
};

// Parses argv. Usage errors (unknown option, bad value, conflicting flags) throw UsageError with the message;
// --help prints and throws HelpRequested.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct HelpRequested {};

Request parse_command_line(int argc, char** argv);

}  // namespace stepwise::ablations
