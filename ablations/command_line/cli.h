// The ./ablate command line (CLI11): what was asked, each option typed once. The options whose value depends on the
// device, the preset or another option are optionals here (unset: not given), which ablations/command_line/resolve.h
// fills in; the rest write straight into the RunConfig every configuration starts from. The flags' own options come
// from the flag table (ablations/flag_table/flag_option.h).
#pragma once

#include "ablations/flag_table/flag_option.h"
#include "bench/run_config.h"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace stepwise::ablations {

struct Request {
  enum class Action { Run, Describe, ListFlags, ListPresets, ListSuites };
  Action action = Action::Run;

  // What runs.
  std::vector<std::string> enable, disable;  // parsed, in flag-table order
  std::string suite;                         // empty: a single configuration
  bool vs_baseline = false;
  // --sweep AXIS=v1,v2,... (repeatable; ablations/run/sweep.h): the suite or configuration at every point of the axes.
  std::vector<std::string> sweep;
  // How the flags act (--bf16-mode=autocast, ...), as the command line gave the flags' options; the command line wins
  // over the suite's choice, which wins over the option's default (ablations/command_line/resolve.cpp).
  OptionValues flag_options;

  // The configuration every run starts from: --seed, --lr, --host-sync, --data-format, --val-data and --val-fraction
  // write into it directly; ablations/command_line/resolve.cpp completes it from the optionals below.
  bench::RunConfig run;
  std::string device = "auto";
  std::optional<std::string> preset;
  std::optional<int64_t> batch_size, seq_len;
  // The model's dimensions, each over the preset's, so a published configuration can be matched.
  struct Dimensions {
    std::optional<int64_t> n_layer, n_head, n_embd, context_length, vocab_size;
    std::optional<double> dropout;
  } dimensions;
  // The measurement (bench/stats.h: StopRule); unset: the device's defaults (ablations/command_line/resolve.h).
  struct Timing {
    std::optional<int64_t> warmup;
    std::optional<size_t> min_steps, max_steps;
    std::optional<double> max_noise, max_time_s;
  } timing;
  // The learning-rate schedule (bench/lr_schedule.h); unset: constant, or cosine when training to a target.
  struct LrSchedule {
    std::optional<bench::LrScheduleKind> kind;
    std::optional<int64_t> warmup_steps, decay_steps;
    std::optional<double> min_ratio;
  } lr_schedule;
  std::optional<std::string> data;  // --data FILE, GLOB or corpus:NAME; none: the synthetic stream
  // --target-loss: time to a target loss instead of step throughput; unset options take bench::TargetOptions'
  // defaults (ablations/command_line/resolve.cpp builds the options).
  struct Target {
    std::optional<double> loss;
    std::optional<int64_t> eval_every, eval_batches, seeds;
    std::optional<int64_t> step_budget;  // the record rule's budget (ablations/judges/record_rule.h)
    std::optional<double> record_p;      // its significance level
  } target;

  // --find-budget (ablations/run/budget_search.h): each row's smallest step budget on a grid at which the speedrun's
  // record rule holds, instead of one run on one horizon.
  struct BudgetSearch {
    bool on = false;
    std::vector<int64_t> grid;           // --budget-grid, as given
    std::optional<int64_t> first, last;  // --budget-first, --budget-last (default: --max-steps)
    std::optional<double> ratio;         // --budget-ratio
    bool branches = true;                // --budget-branches=off: every budget trained from scratch
    std::vector<int64_t> resolved;       // the grid the search runs (ablations/command_line/resolve.cpp)
    std::string resolved_from;           // how it was stated, for the table and budget.json
  } budget_search;

  // Who runs each configuration: stepwise's engine and/or PyTorch Python (bench/python/python_step.h), and where.
  std::vector<std::string> implementations{"libtorch"};
  bool implementations_at_ends = false;  // the others only for the baseline and the last configuration
  bool trace = false;
  bool count_ops = false;  // --count-ops: each row's ATen ops and allocations per step (bench/trace/op_counts.h)

  int nproc_per_node = 1;
  double dist_timeout_s = 300;  // rendezvous and collectives: a rank that is gone fails the run after this

  std::optional<std::string> out;
  std::optional<std::string> run_id;  // shared by the suites of one ./run_all.sh
  std::optional<std::string> resume;  // --resume DIR: finish the run whose results are in DIR
  // --rows: run only these rows of the suite (indices as --dry-run lists them), into the suite's folder; a gated run
  // interleaves two builds row by row with it (scripts/gated_run.py --against). Empty: every row.
  std::vector<size_t> rows;
  bool progress = true;  // --no-progress silences the progress line

  bool dry_run = false;  // --dry-run: resolve and plan the run, print it, run nothing (./run_all.sh plans with it)
  bool json = false;     // --list-flags / --list-presets / --describe / --dry-run as JSON
  bool verbose = false;  // --list-flags --verbose: where each flag's code lives
  bool markdown =
      false;  // --list-flags --markdown: the docs' flag and option tables (ablations/flag_table/flag_docs.h)

  // Internal (ablations/run/execute.h): this process is a child that runs the one row of this index under its own host
  // allocator; it prints the row's lines only.
  std::optional<size_t> row_in_child;
  // Internal: this process runs one point of a sweep, whose "sweep" JSON its results carry (as the parent built it).
  std::optional<std::string> sweep_point;
};

// Parses argv. Usage errors (unknown option, bad value, conflicting flags) throw UsageError with the message;
// --help prints and throws HelpRequested.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct HelpRequested {};

Request parse_command_line(int argc, char** argv);

}  // namespace stepwise::ablations
