// The ./ablate command line's options by --help section (ablations/command_line/cli_options.h): each option's name,
// help line, check and the field it sets. The checks are the flags' options' own where they share one
// (ablations/flag_table/flag_option.h).
#include "ablations/command_line/cli_options.h"

#include "ablations/command_line/cli_checks.h"
#include "ablations/command_line/resolve.h"
#include "ablations/flag_table/flags.h"
#include "model/config.h"

#include <sstream>

namespace stepwise::ablations {

namespace {

// --help's sections, in the order it prints them.
constexpr const char* kFlagsGroup = "Flags and their options";
constexpr const char* kModelGroup = "Model and training";
constexpr const char* kMeasurementGroup = "Measurement";
constexpr const char* kDataGroup = "Data";
constexpr const char* kTargetGroup = "Target loss";
constexpr const char* kBudgetGroup = "Budget search";
constexpr const char* kDistributedGroup = "Distributed";
constexpr const char* kOutputGroup = "Output";
constexpr const char* kListingGroup = "Listing";

// A mode option (--host-sync=chunk ...): checked against its enum's names table and parsed into the enum at the
// command line, so what follows only applies precedence.
template <typename Target, typename E, size_t N>
CLI::Option* mode_option(CLI::App& app, const std::string& name, Target& target, const model::EnumNames<E, N>& names,
                         const std::string& help) {
  return app
      .add_option_function<std::string>(
          name, [&target, names](const std::string& v) { target = names.from_string(v); }, help)
      ->check(CLI::IsMember(names.names()));
}

std::string flag_help() {
  std::string help = "comma-separated flags, or 'all' (every flag but the learning ones, which are named):";
  for (const auto* f : flag_table()) help += "\n    " + std::string(f->name) + " - " + std::string(f->summary);
  return help;
}

std::string option_help(const FlagOption& o) {
  if (o.is_switch) return o.help;
  return o.help + " (default: " + (o.in_suites ? "the suite's, else " : "") + o.default_help + ")";
}

// Every flag's options, in table order, each parsed by its declaration's `set` so a bad value is refused here with
// the declaration's message.
void add_each_flags_options(CLI::App& app, std::deque<CommandLine::FlagOptionGiven>& added) {
  for (const auto* flag : flag_table())
    for (const auto& o : flag->options) {
      auto& entry = added.emplace_back(CommandLine::FlagOptionGiven{&o});
      if (o.is_switch) {
        entry.cli = app.add_flag(o.cli_name(), entry.on, option_help(o));
      } else {
        const CLI::Validator checked(
            [&o](std::string& value) -> std::string {
              bench::RunConfig scratch;
              try {
                o.set(scratch, value);
                return "";
              } catch (const std::invalid_argument& e) {
                return e.what();
              }
            },
            "");
        entry.cli = app.add_option(o.cli_name(), entry.text, option_help(o))->type_name(o.type_name)->check(checked);
      }
      entry.cli->group(kFlagsGroup);
    }
}

}  // namespace

void add_flag_options(CLI::App& app, Request& r, CommandLine& line) {
  app.add_option("--enable", line.enable, flag_help())->group(kFlagsGroup);
  app.add_option("--disable", line.disable, "flags to switch off (with --enable=all, or in every row of a suite)")
      ->group(kFlagsGroup);
  app.add_option("--suite", r.suite, "run a suite: a name from --list-suites or a path to a suite .json")
      ->group(kFlagsGroup);
  app.add_flag("--vs-baseline", r.vs_baseline, "also run the baseline and print the speedup over it")
      ->group(kFlagsGroup);
  add_each_flags_options(app, line.flag_options);
}

void add_model_options(CLI::App& app, Request& r) {
  app.add_option("--preset", r.preset, "model preset (default: gpt2-124m on a GPU, tiny on a CPU)")
      ->check(CLI::IsMember(model::preset_names()))
      ->group(kModelGroup);
  app.add_option("--n-layer", r.dimensions.n_layer, "transformer blocks (default: the preset's)")
      ->check(kPositiveInteger)
      ->group(kModelGroup);
  app.add_option("--n-head", r.dimensions.n_head, "attention heads; must divide --n-embd (default: the preset's)")
      ->check(kPositiveInteger)
      ->group(kModelGroup);
  app.add_option("--n-embd", r.dimensions.n_embd, "model width (default: the preset's)")
      ->check(kPositiveInteger)
      ->group(kModelGroup);
  app.add_option("--context-length", r.dimensions.context_length,
                 "positions the model holds, at least --seq-len (default: the preset's)")
      ->check(kPositiveInteger)
      ->group(kModelGroup);
  app.add_option("--vocab-size", r.dimensions.vocab_size,
                 "vocabulary (default: what the data declares in meta.json or meta.pkl, else the preset's 50257)")
      ->check(kPositiveInteger)
      ->group(kModelGroup);
  app.add_option("--dropout", r.dimensions.dropout, "dropout probability (default: the preset's, 0.1)")
      ->check(number_in(0, true, 1, "a probability in [0, 1)"))
      ->group(kModelGroup);
  app.add_option("--batch-size", r.batch_size, "sequences per step (default: the preset's)")
      ->check(kPositiveInteger)
      ->group(kModelGroup);
  app.add_option("--seq-len", r.seq_len, "tokens per sequence (default: the preset's)")
      ->check(kPositiveInteger)
      ->group(kModelGroup);
  const bench::RunConfig defaults;
  app.add_option("--seed", r.run.seed,
                 "seed for weights, data order and dropout (default: " + std::to_string(defaults.seed) + ")")
      ->group(kModelGroup);
  app.add_option("--lr", r.run.adamw.lr(), "AdamW learning rate (default: 5e-4, Raschka's)")
      ->check(kPositiveNumber)
      ->group(kModelGroup);
  // The trapezoid is a flag (--enable=trapezoid), so a suite can switch it per configuration: one spelling.
  app.add_option_function<std::string>(
         "--lr-schedule",
         [&r](const std::string& v) { r.lr_schedule.kind = bench::kLrScheduleKindNames.from_string(v); },
         "constant (the published tables', the default); cosine: linear warm-up, cosine decay (the default with "
         "--target-loss); the speedrun's trapezoid is the flag --enable=trapezoid")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            if (v == "trapezoid")
              return "the trapezoid is a flag: give --enable=trapezoid (--lr-cooldown-steps is its)";
            return v == "constant" || v == "cosine" ? "" : "must be constant or cosine (got '" + v + "')";
          },
          "{constant,cosine}"))
      ->group(kModelGroup);
  app.add_option("--lr-warmup-steps", r.lr_schedule.warmup_steps,
                 "cosine, trapezoid: steps of linear warm-up (default: " +
                     std::to_string(defaults.lr_schedule.warmup_steps) + ")")
      ->check(kNonNegativeInteger)
      ->group(kModelGroup);
  app.add_option("--lr-decay-steps", r.lr_schedule.decay_steps,
                 "cosine: the step the decay reaches its floor; trapezoid: the steps the schedule spans, whose last "
                 "ends the cool-down (default: --max-steps; with --target-loss the horizon --step-budget, never the "
                 "step cap)")
      ->check(kPositiveInteger)
      ->group(kModelGroup);
  std::ostringstream min_ratio;
  min_ratio << defaults.lr_schedule.min_ratio;
  app.add_option("--lr-min-ratio", r.lr_schedule.min_ratio,
                 "cosine: the floor as a fraction of --lr (default: " + min_ratio.str() + ")")
      ->check(number_in(0, true, 1.0000001, "a fraction in [0, 1]"))
      ->group(kModelGroup);
  app.add_option("--sweep", r.sweep,
                 "run the suite or configuration at every point of an axis: preset=tiny,mini (or seq-len=..., "
                 "batch-size=...); repeat it for the product of several axes. Each point is a run of its own, in "
                 "results/<sweep id>/<point>/, and ./report draws each flag's speedup against the axis")
      ->allow_extra_args(false)
      ->group(kModelGroup);
}

void add_measurement_options(CLI::App& app, Request& r, CommandLine& line) {
  app.add_option("--device", r.device, "auto, cpu, cuda or cuda:N (default: auto)")->group(kMeasurementGroup);
  const auto& cpu = timing_defaults(false);
  const auto& gpu = timing_defaults(true);
  const auto by_device = [](auto c, auto g) {
    std::ostringstream s;
    s << " (default: " << c << " CPU, " << g << " GPU)";
    return s.str();
  };
  app.add_option("--warmup", r.timing.warmup,
                 "warm-up steps, excluded from statistics" + by_device(cpu.warmup, gpu.warmup))
      ->check(kNonNegativeInteger)
      ->group(kMeasurementGroup);
  app.add_option("--min-steps", r.timing.min_steps, "minimum measured steps" + by_device(cpu.min_steps, gpu.min_steps))
      ->check(kPositiveInteger)
      ->group(kMeasurementGroup);
  app.add_option("--steps", line.old_steps, "the old name of --min-steps")
      ->check(kPositiveInteger)
      ->group(kMeasurementGroup);
  app.add_option("--max-steps", r.timing.max_steps, "maximum measured steps" + by_device(cpu.max_steps, gpu.max_steps))
      ->check(kPositiveInteger)
      ->group(kMeasurementGroup);
  app.add_option(
         "--max-noise", r.timing.max_noise,
         "stop once the median's relative 95% CI half-width is below this" + by_device(cpu.max_noise, gpu.max_noise))
      ->check(kPositiveNumber)
      ->group(kMeasurementGroup);
  app.add_option("--max-time", r.timing.max_time_s,
                 "seconds cap on the measured phase and on the warm-up" + by_device(cpu.max_time_s, gpu.max_time_s))
      ->check(kPositiveNumber)
      ->group(kMeasurementGroup);
  mode_option(app, "--host-sync", r.run.timing.host_sync, bench::kHostSyncNames,
              "lagged: read each chunk of steps while the next one runs (default); chunk: wait for each chunk "
              "before queuing the next, so every chunk starts on an idle GPU (to measure what that costs)")
      ->group(kMeasurementGroup);
  app.add_option("--implementations", line.implementations,
                 "who runs each configuration, in this order: libtorch (stepwise's engine), python-eager, "
                 "python-compile, python-compile-max-autotune, python-compile-reduce-overhead (PyTorch Python on the "
                 "same model, weights and batches; default: libtorch)")
      ->group(kMeasurementGroup);
  app.add_option_function<std::string>(
         "--implementations-at", [&r](const std::string& v) { r.implementations_at_ends = v == "ends"; },
         "all (default) or ends: the implementations other than libtorch only for the baseline and the suite's last "
         "configuration")
      ->check(CLI::IsMember(std::vector<std::string>{"all", "ends"}))
      ->group(kMeasurementGroup);
  app.add_flag("--trace", r.trace, "after the timed steps, trace a few steps' kernels with CUPTI into the JSON")
      ->group(kMeasurementGroup);
  app.add_flag("--count-ops", r.count_ops,
               "after the timed steps, count what a few steps dispatch with PyTorch's profiler: ATen operators, bytes "
               "allocated, GPU kernels; into the JSON, and printed per configuration beside its Python rows (with "
               "--implementations=libtorch,python-eager)")
      ->group(kMeasurementGroup);
}

void add_data_options(CLI::App& app, Request& r) {
  app.add_option("--data", r.data,
                 "token file (nanoGPT raw uint16 or llm.c .bin), a quoted glob of shards ('fineweb_train_*.bin', read "
                 "in sorted order as one stream), or corpus:NAME (scripts/corpus.py list); default: synthetic tokens")
      ->group(kDataGroup);
  mode_option(app, "--data-format", r.run.data.format, bench::kTokenFileFormatNames,
              "auto, nanogpt or llmc (default: auto)")
      ->group(kDataGroup);
  app.add_option("--val-data", r.run.data.val_path,
                 "validation tokens, a file or a quoted glob, never trained on (default: the source's own val.bin, "
                 "else the tail --val-fraction of --data held out)")
      ->group(kDataGroup);
  const bench::RunConfig defaults;
  std::ostringstream val_fraction;
  val_fraction << defaults.data.val_fraction;
  app.add_option("--val-fraction", r.run.data.val_fraction,
                 "the tail of the training stream held out for validation when there is no validation file "
                 "(default: " +
                     val_fraction.str() + ")")
      ->check(number_in(0, false, 1, "a fraction in (0, 1)"))
      ->group(kDataGroup);
}

// Each configuration trained until the validation loss reaches the target, over several seeds; --max-steps and
// --max-time then cap each seed (bench/measure/convergence.h).
void add_target_options(CLI::App& app, Request& r, CommandLine& line) {
  // reaches the target, over several seeds; --max-steps and --max-time then cap each seed's training ---
  const bench::TargetOptions target;
  app.add_option("--target-loss", r.target.loss,
                 "train each configuration until the validation loss reaches this (time to a target, per seed)")
      ->check(kPositiveNumber)
      ->group(kTargetGroup);
  app.add_option(
         "--eval-every", r.target.eval_every,
         "with --target-loss: training steps between evaluations (default: " + std::to_string(target.eval_every) + ")")
      ->check(kPositiveInteger)
      ->group(kTargetGroup);
  app.add_option("--eval-batches", r.target.eval_batches,
                 "with --target-loss: validation batches per evaluation, the same ones each time (default: " +
                     std::to_string(target.eval_batches) + ")")
      ->check(kPositiveInteger)
      ->group(kTargetGroup);
  app.add_option("--target-seeds", r.target.seeds,
                 "with --target-loss: seeds per configuration, --seed and the next ones, each moving weights, data "
                 "order and dropout (default: " +
                     std::to_string(target.seeds) + ")")
      ->check(kPositiveInteger)
      ->group(kTargetGroup);
  app.add_option("--seeds", line.old_seeds, "the old name of --target-seeds")
      ->check(kPositiveInteger)
      ->group(kTargetGroup);
  app.add_option("--step-budget", r.target.step_budget,
                 "with --target-loss: the declared horizon N: a cosine or trapezoid schedule ends at N, every seed "
                 "trains all N steps (its first crossing still its time to target) and the record rule judges the "
                 "loss there (default: the suite's own for the preset, else none and a constant rate)")
      ->check(kPositiveInteger)
      ->group(kTargetGroup);
  std::ostringstream record_p;
  record_p << target.record_p;
  app.add_option("--record-p", r.target.record_p,
                 "with --target-loss: the record rule's level: the loss at the step budget must be below the target "
                 "by a one-sided t-test at p below this (default: " +
                     record_p.str() + ", the speedrun's)")
      ->check(number_in(0, false, 1, "a probability in (0, 1)"))
      ->group(kTargetGroup);
}

// The speedrun's way of setting N, per row: the smallest budget of a grid at which the record rule holds
// (ablations/run/budget_search.h).
void add_budget_search_options(CLI::App& app, Request& r) {
  auto& b = r.budget_search;
  app.add_flag("--find-budget", b.on,
               "with --target-loss: search each row's smallest step budget N on a grid at which the record rule "
               "holds (every seed trained all N steps on a schedule ending at N, the loss at N below the target at "
               "p < --record-p), N with its bracket, into budget.json and budget_<N>/ under --out")
      ->group(kBudgetGroup);
  app.add_option("--budget-grid", b.grid,
                 "the budgets to probe, comma-separated and ascending, each within --max-steps (instead of "
                 "--budget-first and --budget-ratio)")
      ->delimiter(',')
      ->check(kPositiveInteger)
      ->group(kBudgetGroup);
  app.add_option("--budget-first", b.first, "the grid's first budget (default: 40)")
      ->check(kPositiveInteger)
      ->group(kBudgetGroup);
  app.add_option("--budget-ratio", b.ratio, "the ratio between the grid's budgets, above 1 (default: 1.5)")
      ->check(number_in(1, false, 1e300, "a ratio above 1"))
      ->group(kBudgetGroup);
  app.add_option("--budget-last", b.last, "the grid's last budget, at most --max-steps (default: --max-steps)")
      ->check(kPositiveInteger)
      ->group(kBudgetGroup);
  app.add_option_function<std::string>(
         "--budget-branches", [&b](const std::string& v) { b.branches = v == "on"; },
         "on (default): a row on the trapezoid trains one line per seed and branches each budget's cool-down off "
         "it; off: every budget from scratch (to check or time the branches)")
      ->check(CLI::IsMember(std::vector<std::string>{"on", "off"}))
      ->group(kBudgetGroup);
}

void add_distributed_options(CLI::App& app, Request& r) {
  app.add_option("--nproc-per-node", r.nproc_per_node,
                 "data-parallel ranks to start on this machine (c10d: NCCL on GPUs, Gloo on "
                 "CPU); a rank started by torchrun (RANK, WORLD_SIZE set) joins instead")
      ->check(kPositiveInteger)
      ->group(kDistributedGroup);
  app.add_option("--dist-timeout", r.dist_timeout_s,
                 "seconds to wait for every rank to join, and for any collective, before failing (default: 300)")
      ->check(kPositiveNumber)
      ->group(kDistributedGroup);
}

void add_output_options(CLI::App& app, Request& r, CommandLine& line) {
  app.add_option("--out", r.out,
                 "results directory (default: results/<stamp>_<preset>_<device>), or a .json file "
                 "for a single configuration")
      ->group(kOutputGroup);
  app.add_option("--run-id", r.run_id, "identifier written into every result (default: <stamp>_<preset>_<device>)")
      ->group(kOutputGroup);
  app.add_option("--resume", r.resume,
                 "finish an interrupted run: results in DIR that are ok and were measured under the same settings "
                 "(flags, preset, batch, steps, device, build, torch) are kept; the rest run, into DIR")
      ->group(kOutputGroup);
  app.add_option("--rows", r.rows,
                 "with --suite: run only these rows (their indices, 0 the baseline, as --dry-run lists them), into the "
                 "suite's folder under --run-id; a later row finds the baseline an earlier call wrote there. A gated "
                 "run interleaves two builds row by row this way (docs/ci.md)")
      ->delimiter(',')
      ->group(kOutputGroup);
  app.add_flag("--no-progress", line.no_progress, "no progress line while running (it only appears on a terminal)")
      ->group(kOutputGroup);
}

void add_listing_options(CLI::App& app, Request& r, CommandLine& line) {
  app.set_help_flag("-h,--help", "print this help and exit")->group(kListingGroup);
  app.add_flag("--list-flags", line.list_flags, "list every flag: what it switches and where it applies")
      ->group(kListingGroup);
  app.add_flag("--list-presets", line.list_presets, "list the model presets with their sizes")->group(kListingGroup);
  app.add_flag("--list-suites", line.list_suites, "list the suites")->group(kListingGroup);
  app.add_flag("--describe", line.describe, "print the model's parameters, FLOPs per token and weight memory")
      ->group(kListingGroup);
  app.add_flag("--dry-run", r.dry_run,
               "resolve and plan the run, print its configurations (which run, which are skipped and why) and run "
               "nothing")
      ->group(kListingGroup);
  app.add_flag("--json", r.json, "with --list-*/--describe/--dry-run: print JSON")->group(kListingGroup);
  app.add_flag("--verbose", r.verbose, "with --list-flags: also where each flag's code lives")->group(kListingGroup);
  app.add_flag("--markdown", r.markdown,
               "with --list-flags: the flag table and the flags' options as the README and docs/flags.md show them")
      ->group(kListingGroup);
}

void add_internal_options(CLI::App& app, Request& r) {
  app.add_option("--row-in-child", r.row_in_child,
                 "internal: run only this row, as the child process a host allocator needs (ablations/run/execute.h)")
      ->group(kInternalGroup);
  app.add_option("--sweep-point", r.sweep_point, "internal: the sweep point this process runs (ablations/run/sweep.h)")
      ->group(kInternalGroup);
}

}  // namespace stepwise::ablations
