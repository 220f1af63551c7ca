// The option declarations, each with its help line, bound to the RunConfig they set, and the cross-option checks
// that need no device (those live in ablations/resolve.cpp).
#include "ablations/cli.h"

#include "ablations/flags.h"
#include "ablations/resolve.h"
#include "bench/python/python_step.h"
#include "model/config.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <sstream>

namespace stepwise::ablations {

namespace {

// Validators whose message names the rule, not CLI11's "Value 0 not in range 0.000000 to 1.797...e308".
CLI::Validator integer_at_least(long long minimum, const char* what) {
  return CLI::Validator(
      [minimum, what](std::string& value) -> std::string {
        try {
          size_t used = 0;
          const long long v = std::stoll(value, &used);
          if (used == value.size() && v >= minimum) return "";
        } catch (const std::exception&) {
        }
        return std::string("must be ") + what + " (got '" + value + "')";
      },
      what);
}

CLI::Validator number_above(double minimum, bool inclusive, double below, const char* what) {
  return CLI::Validator(
      [=](std::string& value) -> std::string {
        try {
          size_t used = 0;
          const double v = std::stod(value, &used);
          if (used == value.size() && (inclusive ? v >= minimum : v > minimum) && v < below) return "";
        } catch (const std::exception&) {
        }
        return std::string("must be ") + what + " (got '" + value + "')";
      },
      what);
}

const CLI::Validator kPositiveInteger = integer_at_least(1, "a positive integer");
const CLI::Validator kNonNegativeInteger = integer_at_least(0, "zero or a positive integer");
const CLI::Validator kPositiveNumber = number_above(0, false, 1e300, "a positive number");

// A mode option (--bf16-mode=pure ...): checked against its names and parsed into its enum at the command line, so
// what follows only applies precedence. `parse` is the enum's from_string.
template <typename Target, typename Parse>
CLI::Option* mode_option(CLI::App& app, const std::string& name, Target& target, Parse parse,
                         const std::vector<std::string>& names, const std::string& help) {
  return app
      .add_option_function<std::string>(
          name, [&target, parse](const std::string& v) { target = parse(v); }, help)
      ->check(CLI::IsMember(names));
}

std::string flag_help() {
  std::string help = "comma-separated flags, or 'all':";
  for (const auto* f : flag_table()) help += "\n    " + std::string(f->name) + " - " + std::string(f->summary);
  return help;
}

}  // namespace

Request parse_command_line(int argc, char** argv) {
  Request r;
  CLI::App app{
      "stepwise: measure what each GPT training-speed optimization buys on this machine.\n"
      "  ./ablate --enable=bf16,flash          one configuration\n"
      "  ./ablate --suite=raschka              a suite (see --list-suites)\n"
      "  ./ablate --describe --preset=NAME     a model's size and FLOPs",
      "ablate"};
  app.get_formatter()->column_width(34);
  std::string enable, disable;
  bool describe = false, list_flags = false, list_presets = false, list_suites = false;

  app.add_option("--enable", enable, flag_help());
  app.add_option("--disable", disable, "flags to switch off (with --enable=all, or in every step of a suite)");
  app.add_option("--suite", r.suite, "run a suite: a name from --list-suites or a path to a suite .json");
  app.add_flag("--vs-baseline", r.vs_baseline, "also run the baseline and print the speedup over it");
  app.add_option("--preset", r.run.preset, "model preset (default: gpt2-124m on a GPU, tiny on a CPU)")
      ->check(CLI::IsMember(model::preset_names()));
  app.add_option("--device", r.device, "auto, cpu, cuda or cuda:N (default: auto)");
  app.add_option("--batch-size", r.run.batch_size, "sequences per step (default: the preset's)")
      ->check(kPositiveInteger);
  app.add_option("--seq-len", r.run.seq_len, "tokens per sequence (default: the preset's)")->check(kPositiveInteger);
  const auto& cpu = timing_defaults(false);
  const auto& gpu = timing_defaults(true);
  const auto defaults = [](auto c, auto g) {
    std::ostringstream s;
    s << " (default: " << c << " CPU, " << g << " GPU)";
    return s.str();
  };
  app.add_option("--warmup", r.run.timing.warmup,
                 "warm-up steps, excluded from statistics" + defaults(cpu.warmup, gpu.warmup))
      ->check(kNonNegativeInteger);
  app.add_option("--steps", r.run.timing.stop.min_steps,
                 "minimum measured steps" + defaults(cpu.min_steps, gpu.min_steps))
      ->check(kPositiveInteger);
  app.add_option("--max-steps", r.run.timing.stop.max_steps,
                 "maximum measured steps" + defaults(cpu.max_steps, gpu.max_steps))
      ->check(kPositiveInteger);
  app.add_option(
         "--max-noise", r.run.timing.stop.max_noise,
         "stop once the median's relative 95% CI half-width is below this" + defaults(cpu.max_noise, gpu.max_noise))
      ->check(kPositiveNumber);
  app.add_option("--max-time", r.run.timing.stop.max_time_s,
                 "seconds cap on the measured phase and on the warm-up" + defaults(cpu.max_time_s, gpu.max_time_s))
      ->check(kPositiveNumber);
  mode_option(app, "--host-sync", r.run.timing.host_sync, bench::host_sync_from_string, {"lagged", "chunk"},
              "lagged: read each chunk of steps while the next one runs (default); chunk: wait for each chunk "
              "before queuing the next, so every chunk starts on an idle GPU (to measure what that costs)");
  app.add_option("--seed", r.run.seed, "seed for weights, data order and dropout (default: 123)");
  app.add_option("--lr", r.run.adamw.lr(), "AdamW learning rate (default: 5e-4, Raschka's)")->check(kPositiveNumber);
  app.add_option("--data", r.data,
                 "token file (nanoGPT raw uint16 or llm.c .bin), a quoted glob of shards ('fineweb_train_*.bin', read "
                 "in sorted order as one stream), or corpus:NAME (scripts/corpus.py list); default: synthetic tokens");
  mode_option(app, "--data-format", r.run.data.format, bench::token_file_format_from_string,
              {"auto", "nanogpt", "llmc"}, "auto, nanogpt or llmc (default: auto)");
  app.add_option("--val-data", r.run.data.val_path,
                 "validation tokens, a file or a quoted glob, never trained on (default: the source's own val.bin, "
                 "else the tail --val-fraction of --data held out)");
  app.add_option("--val-fraction", r.run.data.val_fraction,
                 "the tail of the training stream held out for validation when there is no validation file "
                 "(default: 0.1)")
      ->check(number_above(0, false, 1, "a fraction in (0, 1)"));
  // The model's dimensions, each over the preset's, so a published configuration can be matched.
  app.add_option("--n-layer", r.run.model.n_layer(), "transformer blocks (default: the preset's)")
      ->check(kPositiveInteger);
  app.add_option("--n-head", r.run.model.n_head(), "attention heads; must divide --n-embd (default: the preset's)")
      ->check(kPositiveInteger);
  app.add_option("--n-embd", r.run.model.n_embd(), "model width (default: the preset's)")->check(kPositiveInteger);
  app.add_option("--context-length", r.run.model.context_length(),
                 "positions the model holds, at least --seq-len (default: the preset's)")
      ->check(kPositiveInteger);
  app.add_option("--vocab-size", r.run.model.vocab_size(),
                 "vocabulary (default: what the data declares in meta.json or meta.pkl, else the preset's 50257)")
      ->check(kPositiveInteger);
  app.add_option("--out", r.out,
                 "results directory (default: results/<stamp>_<preset>_<device>), or a .json file "
                 "for a single configuration");
  app.add_option("--row-in-child", r.row_in_child,
                 "internal: run only this row, as the child process a host allocator needs (ablations/execute.h)")
      ->group("");  // hidden from --help
  app.add_option("--sweep", r.sweep,
                 "run the suite or configuration at every point of an axis: preset=tiny,mini (or seq-len=..., "
                 "batch-size=...); repeat it for the product of several axes. Each point is a run of its own, in "
                 "results/<sweep id>/<point>/, and ./report draws each flag's speedup against the axis")
      ->allow_extra_args(false);
  app.add_option("--sweep-point", r.sweep_point, "internal: the sweep point this process runs (ablations/sweep.h)")
      ->group("");  // hidden from --help
  app.add_option("--resume", r.resume,
                 "finish an interrupted run: results in DIR that are ok and were measured under the same settings "
                 "(flags, preset, batch, steps, device, build, torch) are kept; the rest run, into DIR");
  app.add_option("--run-id", r.run_id, "identifier written into every result (default: <stamp>_<preset>_<device>)");
  mode_option(app, "--bf16-mode", r.modes.bf16_mode, bench::bf16_mode_from_string, {"pure", "autocast"},
              "pure (weights cast) or autocast (fp32 weights); default: the suite's, else pure");
  mode_option(app, "--pinned-mode", r.modes.pinned_mode, bench::pinned_mode_from_string, {"async", "blocking"},
              "async (non_blocking on a copy stream) or blocking; default: the suite's, else async");
  mode_option(app, "--sdpa-backend", r.modes.sdpa_backend, model::sdpa_backend_from_string, model::sdpa_backend_names(),
              "with flash: pin auto, flash, efficient, cudnn or math");
  mode_option(app, "--checkpoint-mode", r.modes.checkpoint_mode, model::checkpoint_mode_from_string,
              model::checkpoint_mode_names(),
              "with checkpoint: full (each block keeps only its input) or selective (recompute the LayerNorms and the "
              "GELU); default: the suite's, else full");
  mode_option(app, "--host-allocator-mode", r.modes.host_allocator_mode, bench::host_allocator_mode_from_string,
              bench::host_allocator_mode_names(),
              "with host_allocator: glibc-tunables (glibc's malloc keeping freed memory), jemalloc or tcmalloc "
              "(preloaded); default: the suite's, else glibc-tunables");
  mode_option(app, "--fp8-scaling", r.modes.fp8_scaling, model::fp8_scaling_from_string, model::fp8_scaling_names(),
              "with fp8: tensorwise (one scale per tensor; e5m2 gradients) or rowwise (a power-of-two scale per row, "
              "e4m3 throughout), torchao's Float8Linear recipes; default: the suite's, else tensorwise");
  app.add_flag("--fp8-head", r.run.model.fp8_head(),
               "with fp8: the output head in FP8 too (the speedrun's FP8 head), if the small-GEMM filter lets it");
  app.add_flag("--fp8-every-layer", r.run.model.fp8_every_layer(),
               "with fp8: no small-GEMM filter, every linear whose sizes _scaled_mm takes runs in FP8 (default: only "
               "where torchtitan's filter says FP8 is faster)");
  app.add_option("--ce-chunk-rows", r.run.model.ce_chunk_rows(),
                 "with chunked_ce: rows of the (B*T, V) logits per chunk (default: Liger's rule from B*T, V and the "
                 "width)")
      ->check(kPositiveInteger);
  mode_option(
      app, "--adamw-baseline", r.adamw_baseline,
      [](const std::string& v) { return v == "auto" ? std::nullopt : std::optional(bench::adamw_kind_from_string(v)); },
      {"auto", "forloop", "foreach", "reference"},
      "AdamW when fused_adamw is off: auto (what torch.optim.AdamW() picks on the device: forloop on a CPU, foreach "
      "on CUDA), forloop, foreach, or reference (the C++ frontend's torch::optim::AdamW)");
  app.add_option("--max-batch-limit", r.run.max_batch_limit,
                 "largest batch the max_batch probe tries (default: 1024 GPU, 4x the base batch CPU)")
      ->check(kPositiveInteger);
  app.add_option("--max-batch-time", r.run.max_batch_time_s,
                 "seconds cap on the max_batch probe (default: 120 GPU, the --max-time CPU)")
      ->check(kPositiveNumber);
  std::string implementations = "libtorch";
  app.add_option("--implementations", implementations,
                 "who runs each configuration, in this order: libtorch (stepwise's engine), python-eager, "
                 "python-compile, python-compile-max-autotune, python-compile-reduce-overhead (PyTorch Python on the "
                 "same model, weights and batches; default: libtorch)");
  mode_option(
      app, "--implementations-at", r.implementations_at_ends, [](const std::string& v) { return v == "ends"; },
      {"all", "ends"},
      "all (default) or ends: the implementations other than libtorch only for the baseline and the suite's last "
      "configuration");
  app.add_option("--dropout", r.run.model.dropout(), "dropout probability (default: the preset's, 0.1)")
      ->check(number_above(0, true, 1, "a probability in [0, 1)"));
  app.add_flag("--trace", r.trace, "after the timed steps, trace a few steps' kernels with CUPTI into the JSON");
  // Time to a target loss (bench/measure/convergence.h): each configuration trained until the validation loss reaches
  // the target, over several seeds; --max-steps and --max-time then cap each seed's training.
  app.add_option("--target-loss", r.target_loss,
                 "train each configuration until the validation loss reaches this (time to a target, per seed)")
      ->check(kPositiveNumber);
  app.add_option("--eval-every", r.eval_every, "with --target-loss: training steps between evaluations (default: 25)")
      ->check(kPositiveInteger);
  app.add_option("--eval-batches", r.eval_batches,
                 "with --target-loss: validation batches per evaluation, the same ones each time (default: 8)")
      ->check(kPositiveInteger);
  app.add_option(
         "--seeds", r.seeds,
         "with --target-loss: seeds per configuration, each moving weights, data order and dropout (default: 3)")
      ->check(kPositiveInteger);
  mode_option(app, "--lr-schedule", r.run.lr_schedule.kind, bench::lr_schedule_kind_from_string, {"constant", "cosine"},
              "constant (the published tables', the default) or cosine: linear warm-up, cosine decay (the default with "
              "--target-loss)");
  app.add_option("--lr-warmup-steps", r.run.lr_schedule.warmup_steps, "cosine: steps of linear warm-up (default: 0)")
      ->check(kNonNegativeInteger);
  app.add_option("--lr-decay-steps", r.run.lr_schedule.decay_steps,
                 "cosine: the step the decay reaches its floor (default: --max-steps)")
      ->check(kPositiveInteger);
  app.add_option("--lr-min-ratio", r.run.lr_schedule.min_ratio,
                 "cosine: the floor as a fraction of --lr (default: 0.1)")
      ->check(number_above(0, true, 1.0000001, "a fraction in [0, 1]"));
  app.add_option("--nproc-per-node", r.nproc_per_node,
                 "data-parallel ranks to start on this machine (c10d: NCCL on GPUs, Gloo on "
                 "CPU); a rank started by torchrun (RANK, WORLD_SIZE set) joins instead")
      ->check(kPositiveInteger);
  app.add_option("--dist-timeout", r.dist_timeout_s,
                 "seconds to wait for every rank to join, and for any collective, before failing (default: 300)")
      ->check(kPositiveNumber);
  bool no_progress = false;
  app.add_flag("--no-progress", no_progress, "no progress line while running (it only appears on a terminal)");
  app.add_flag("--describe", describe, "print the model's parameters, FLOPs per token and weight memory");
  app.add_flag("--list-flags", list_flags, "list every flag: what it switches and where it applies");
  app.add_flag("--list-presets", list_presets, "list the model presets with their sizes");
  app.add_flag("--list-suites", list_suites, "list the suites");
  app.add_flag("--dry-run", r.dry_run,
               "resolve and plan the run, print its configurations (which run, which are skipped and why) and run "
               "nothing");
  app.add_flag("--json", r.json, "with --list-*/--describe/--dry-run: print JSON");
  app.add_flag("--verbose", r.verbose, "with --list-flags: also where each flag's code lives");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    throw HelpRequested{};
  } catch (const CLI::ExtrasError& e) {
    std::string valid;
    for (const auto* option : app.get_options())
      if (!option->get_lnames().empty()) valid += (valid.empty() ? "--" : ", --") + option->get_lnames().front();
    throw UsageError(std::string(e.what()) + " (valid options: " + valid + ")");
  } catch (const CLI::ParseError& e) {
    // "--steps: must be a positive integer (got '0')" reads better as one sentence.
    std::string what = e.what();
    if (const auto colon = what.find(": must be "); colon != std::string::npos) what.erase(colon, 1);
    throw UsageError(what);
  }

  r.progress = !no_progress;
  for (const auto* option : app.get_options())
    if (option->count() > 0 && !option->get_lnames().empty()) r.given.insert("--" + option->get_lnames().front());
  const int actions = describe + list_flags + list_presets + list_suites;
  if (actions > 1) throw UsageError("--describe, --list-flags, --list-presets and --list-suites exclude each other");
  if (describe) r.action = Request::Action::Describe;
  if (list_flags) r.action = Request::Action::ListFlags;
  if (list_presets) r.action = Request::Action::ListPresets;
  if (list_suites) r.action = Request::Action::ListSuites;

  try {
    r.implementations.clear();
    std::stringstream list(implementations);
    for (std::string name; std::getline(list, name, ',');) {
      bench::check_implementation(name);
      if (std::find(r.implementations.begin(), r.implementations.end(), name) != r.implementations.end())
        throw std::invalid_argument("implementation '" + name + "' is named twice");
      r.implementations.push_back(name);
    }
    r.enable = parse_flag_list(enable);
    r.disable = parse_flag_list(disable);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  for (const auto& f : r.disable)
    if (std::find(r.enable.begin(), r.enable.end(), f) != r.enable.end() && enable != "all")
      throw UsageError("flag '" + f + "' is both enabled and disabled");
  if (!r.suite.empty() && !enable.empty())
    throw UsageError("--suite and --enable exclude each other (a suite names its own flags; --disable removes some)");
  if (!r.suite.empty() && r.vs_baseline)
    throw UsageError("--vs-baseline is for a single configuration; a suite always starts with its baseline");
  if (r.resume && r.out) throw UsageError("--resume DIR writes into DIR; drop --out");
  if (r.out && r.out->ends_with(".json") && (!r.suite.empty() || r.vs_baseline))
    throw UsageError("--out FILE.json takes a single configuration; give a directory for a suite or --vs-baseline");
  if (enable == "all")  // --enable=all --disable=x: everything but x
    std::erase_if(r.enable, [&](const std::string& f) {
      return std::find(r.disable.begin(), r.disable.end(), f) != r.disable.end();
    });
  return r;
}

}  // namespace stepwise::ablations
