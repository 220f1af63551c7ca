// Fills in what the command line left open, in one place: the device, the preset's model and default batch and
// sequence, the device's timing defaults, and how flags act (command line > suite file > the option's default).
#pragma once

#include "ablations/command_line/cli.h"
#include "ablations/run/suite.h"
#include "bench/data/source.h"
#include "model/config.h"

namespace stepwise::ablations {

// Completes request.run (and request.run.device). Throws UsageError for anything the user can fix: no GPU for
// --device=cuda, a sequence longer than the model's context, a model shape that cannot be built, a suite option with
// an invalid value.
void resolve_run(Request& request, const Suite& suite);

// Sets every flag option of `run` (whose device is resolved): the command line's value, else the suite's for the
// device's kind, else the suite's for every device, else the option's default; an option none of them gives keeps
// the RunConfig's value.
void apply_flag_options(bench::RunConfig& run, const OptionValues& command_line, const Suite& suite);

// An option of a flag that no configuration of the run enables (none of the suite's rows asks for it, or --disable
// takes it out) would change nothing and say nothing: a UsageError naming the flag to enable, for every flag's
// options alike, from their declarations. A suite file's own options are held to the same rule as it is read.
void check_options_have_their_flags(const OptionValues& command_line, const Suite& suite,
                                    const std::vector<std::string>& disabled);

// The preset's model with the dimensions the command line gave (--n-layer, --n-head, --n-embd, --context-length,
// --vocab-size, --dropout) laid over it; resolve_run and --describe both build it here. Throws UsageError for a shape
// that cannot be built (n_head not dividing n_embd), naming the options.
model::GPTConfig model_with_overrides(const Request& request, const model::Preset& preset);

// The sequence length when --seq-len is not given: the preset's, or the context when --context-length is shorter.
int64_t default_seq_len(const model::Preset& preset, const model::GPTConfig& model);

// Once the data is read: the model takes the vocabulary the data declares (meta.json, meta.pkl) unless --vocab-size
// gave one. Throws UsageError when --vocab-size is smaller than the data's vocabulary (its ids would not fit).
void take_data_vocabulary(Request& request, const bench::TokenSource& source);

// --target-loss: how each seed trains (the evaluation, the caps, the warm-up), with --max-steps and --max-time read as
// each seed's caps, defaulting to those below; nullopt without --target-loss. Throws UsageError for evaluation options
// given without a target.
std::optional<bench::TargetOptions> target_options(const Request& request);
// A target run's horizon and schedule: with a step budget (--step-budget, or the suite's own) the schedule ends at it
// (decay_steps = N); without one a schedule that decays over the run's length is a usage error naming --step-budget
// when asked for (a schedule, its shape, a trapezoid row), else the stated default: a constant rate, with the reason
// in target.budget_from. Never the step cap, which the seeds stop long before.
void resolve_horizon(bench::TargetOptions& target, bench::LrSchedule& lr, const Request::LrSchedule& asked,
                     bool a_step_has_trapezoid);
// --find-budget: the grid (--budget-grid as given, else geometric from --budget-first at --budget-ratio to
// --budget-last or --max-steps, which a search needs as its bound), checked within the step cap, into
// request.budget_search.resolved; the horizon the schedules resolve on is the grid's last budget (each probe ends
// its own at its budget). Throws UsageError naming the option at fault.
void resolve_budget_grid(Request& request, bench::TargetOptions& target);
// The grid's defaults: the README's search, 40, 60, 90, ... up to the bound.
constexpr int64_t kBudgetFirst = 40;
constexpr double kBudgetRatio = 1.5;

// Each seed's caps when --max-steps and --max-time are not given.
constexpr int64_t kTargetMaxSteps = 5000;
constexpr double kTargetMaxTimeCpuS = 600, kTargetMaxTimeCudaS = 3600;

// The preset used when none is given: gpt2-124m on a GPU, tiny on a CPU.
std::string default_preset(const c10::Device& device);

// Timing defaults by device kind (the CLI's help prints them from here).
struct TimingDefaults {
  int64_t warmup;
  size_t min_steps, max_steps;
  double max_noise, max_time_s;
};
const TimingDefaults& timing_defaults(bool cuda);

}  // namespace stepwise::ablations
