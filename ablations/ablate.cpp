// ./ablate: runs one configuration or a suite of them and writes one JSON result per configuration.
//
// ablations/command_line/cli.h          defines: Request, parse_command_line (every option, bound to what it sets)
// ablations/command_line/resolve.h      defines: resolve_run (defaults, preset, precedence), take_data_vocabulary
// ablations/command_line/listings.h     defines: --list-flags, --list-presets, --list-suites, --describe
// ablations/command_line/launcher.h     defines: launch_ranks (--nproc-per-node)
// ablations/run/suite.h, plan.h         defines: find_suite, single_configuration, plan_suite, plan_json
// ablations/run/execute.h               defines: execute_suite (run, loss check, result document, JSON per row)
// ablations/run/budget_search.h         defines: run_budget_search (--find-budget: each row's N on a grid)
// ablations/run/sweep.h, interrupt.h    defines: --sweep's points; install_interrupt_handler (Ctrl-C)
// ablations/run/report_tables.h         defines: show_report_tables (the tables at the end: ./report show's)
// ablations/command_line/startup_table.h      defines: startup_table (what a run will do, before it starts)
// ablations/flag_table/flag_docs.h      defines: list_flags_markdown (--list-flags --markdown)
// bench/atomic_file.h, source_dir.h     defines: check_writable_directory; source_dir (the checkout: results/)
// bench/data/source.h, device.h         defines: load_tokens (files, a corpus, synthetic); resolve_device
// bench/distributed/*.h, measure/env.h  defines: dist_env_from_environment, Collectives (c10d); capture_env
// bench/cpu_tensor_memory.h             defines: count_cpu_tensor_bytes (the CPU tensors' peak)
// bench/trace/cupti_tracer.h            defines: attach_cupti (--trace claims CUPTI before any capture)
#include "ablations/command_line/cli.h"
#include "ablations/command_line/launcher.h"
#include "ablations/command_line/listings.h"
#include "ablations/command_line/resolve.h"
#include "ablations/command_line/startup_table.h"
#include "ablations/flag_table/flag_docs.h"
#include "ablations/run/budget_search.h"
#include "ablations/run/execute.h"
#include "ablations/run/interrupt.h"
#include "ablations/run/report_tables.h"
#include "ablations/run/sweep.h"
#include "bench/atomic_file.h"
#include "bench/cpu_tensor_memory.h"
#include "bench/data/source.h"
#include "bench/device.h"
#include "bench/distributed/collectives.h"
#include "bench/distributed/dist_env.h"
#include "bench/measure/env.h"
#include "bench/memory.h"
#include "bench/source_dir.h"
#include "bench/trace/cupti_tracer.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iostream>
#include <map>

namespace sw = stepwise;
namespace ab = stepwise::ablations;

namespace {

// Exit statuses: 0 all configurations ok or skipped, 1 some failed, 2 usage error, 128 + the signal when interrupted
// (130 Ctrl-C, 143 SIGTERM: ablations/run/interrupt.h).
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

std::string slug(std::string s) {
  for (auto& c : s) c = std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
  s.erase(std::unique(s.begin(), s.end(), [](char a, char b) { return a == '-' && b == '-'; }), s.end());
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s;
}

// The first stepwise result in `dir` (--resume reads what the run it continues wrote), or nullopt.
std::optional<nlohmann::json> first_result_in(const std::filesystem::path& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    try {
      auto doc = nlohmann::json::parse(in);
      if (doc.value("tool", "") == "stepwise") return doc;
    } catch (const std::exception&) {
    }
  }
  return std::nullopt;
}

// The run id of the results already in `dir` (--resume continues that run), or the folder's name.
std::string run_id_in(const std::filesystem::path& dir) {
  const auto doc = first_result_in(dir);
  return doc ? doc->value("run_id", dir.filename().string()) : dir.filename().string();
}

std::string device_slug(const c10::Device& device, const nlohmann::json& env) {
  if (!device.is_cuda()) return "cpu";
  std::string name = env.value("device_name", "gpu");
  return slug(name.rfind("NVIDIA ", 0) == 0 ? name.substr(7) : name);
}

// What one run ended with: its exit status, and whether it was interrupted.
struct RunOutcome {
  int status = 0;
  bool interrupted = false;
};

// One run: the suite or configuration, at one point of a sweep or without one. `args`: the command line after the
// program's name, as a row's child process is started with it.
RunOutcome run_once(ab::Request& request, const std::vector<std::string>& args,
                    const std::optional<sw::bench::DistEnv>& rank_env) {
  const ab::Suite suite = request.suite.empty() ? ab::single_configuration(request.enable, request.vs_baseline)
                                                : ab::find_suite(request.suite);
  ab::resolve_run(request, suite);
  auto& base = request.run;
  std::shared_ptr<sw::bench::Collectives> collectives;
  if (rank_env) {
    if (base.device.is_cuda())
      base.device = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(rank_env->local_rank));
    const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(request.dist_timeout_s * 1000));
    collectives = std::make_shared<sw::bench::Collectives>(*rank_env, base.device, timeout);
    base.world_size = collectives->world_size();  // zero1 shards across the ranks; fewer than two: skipped
  }
  const bool leader = !collectives || collectives->rank() == 0;
  if (collectives && request.implementations != std::vector<std::string>{"libtorch"})
    throw ab::UsageError(
        "--implementations other than libtorch run on one process; drop --nproc-per-node (or the "
        "torchrun environment)");

  const auto& target = base.target;
  if (target && collectives)
    throw ab::UsageError("--target-loss trains on one process; drop --nproc-per-node (or the torchrun environment)");
  auto planned = ab::plan_suite(suite, base, request.disable);
  if (!request.rows.empty() && request.suite.empty())
    throw ab::UsageError("--rows selects rows of a suite: give --suite too");
  for (const size_t row : request.rows)
    if (row >= planned.size())
      throw ab::UsageError("--rows " + std::to_string(row) + ": the suite " + suite.name + " has rows 0.." +
                           std::to_string(planned.size() - 1) + " (./ablate --suite=" + suite.name +
                           " --dry-run lists them)");
  // --trace: CUPTI is claimed now, once, before any configuration captures a CUDA graph (bench/trace/cupti_tracer.h).
  if (base.trace_steps > 0 && base.device.is_cuda()) sw::bench::attach_cupti();

  const nlohmann::json env = sw::bench::capture_env(base.device);
  if (request.dry_run) {
    if (!leader) return {};
    const auto& grid = request.budget_search.resolved;
    if (request.json) {
      auto plan = ab::plan_json(suite, planned, base, request.implementations, request.implementations_at_ends);
      plan["env"] = env;
      if (request.budget_search.on)
        plan["budget_search"] = ab::budget_plan_json(planned, grid, request.budget_search.branches);
      std::cout << plan.dump(2) << "\n";
    } else {
      std::cout << ab::startup_table(suite, base, planned, env, "(dry run: nothing runs, nothing is written)") << "\n"
                << (request.budget_search.on ? ab::budget_plan_text(planned, request.budget_search.resolved_from, grid,
                                                                    request.budget_search.branches)
                                             : "");
    }
    return {};
  }
  std::optional<std::filesystem::path> resume_dir;
  if (request.resume) {
    resume_dir = std::filesystem::absolute(*request.resume);
    if (!std::filesystem::is_directory(*resume_dir))
      throw ab::UsageError("--resume " + *request.resume +
                           ": no such directory (give the results folder of the run "
                           "to finish, e.g. results/<run_id>)");
    if (!request.run_id) request.run_id = run_id_in(*resume_dir);
  }
  ab::RunContext context{request.run_id.value_or(sw::bench::utc_timestamp(/*compact=*/true) + "_" + base.preset + "_" +
                                                 device_slug(base.device, env)),
                         env, request.sweep_point ? nlohmann::json::parse(*request.sweep_point) : nlohmann::json()};
  const ab::ResultPaths paths(request.out, resume_dir, context.run_id, suite.name);
  try {
    if (leader) sw::bench::check_writable_directory(paths.folder());
  } catch (const std::runtime_error& e) {
    throw ab::UsageError(e.what());
  }

  int64_t largest_batch = base.batch_size;
  for (const auto& p : planned)
    if (p.run.max_batch) largest_batch = std::max(largest_batch, p.run.effective_max_batch_limit());
  sw::bench::TokenSource source;
  try {
    source = sw::bench::load_tokens(base.data, base.model.vocab_size(), base.seq_len, largest_batch, base.seed,
                                    /*need_validation=*/target.has_value());
  } catch (const std::runtime_error& e) {
    throw ab::UsageError(e.what());
  }
  // The model takes the data's vocabulary unless --vocab-size gave one; every result records what was read.
  ab::take_data_vocabulary(request, source);
  base.data.format = source.format;
  base.data.provenance = source.provenance;
  for (auto& p : planned) {
    p.run.data.format = source.format;
    p.run.data.provenance = source.provenance;
    p.run.model.vocab_size(base.model.vocab_size());
  }

  const bool child = request.row_in_child.has_value();  // a row under its own host allocator: its lines only
  if (leader && !child)
    std::cout << ab::startup_table(suite, base, planned, env, paths.shown().string())
              << (collectives ? "data parallel: " + std::to_string(collectives->world_size()) + " ranks, " +
                                    collectives->backend() + "\n"
                              : std::string())
              << "\n"
              << std::flush;  // a pipe (a CI log, a test waiting for the run to start) sees the plan as it starts
  ab::install_interrupt_handler();
  if (const auto& b = request.budget_search; b.on) {  // each row's N on the grid, instead of one horizon
    const auto found = ab::run_budget_search(suite, planned, context, source.tokens, *target,
                                             {b.resolved, b.resolved_from, b.branches, paths.folder().parent_path(),
                                              request.progress, source.val_tokens, args});
    return {found.interrupted ? ab::interrupt_exit_status() : found.failed > 0 ? kExitFailed : 0, found.interrupted};
  }
  ab::ExecuteOptions options{paths, request.progress, request.implementations, request.implementations_at_ends,
                             resume_dir.has_value()};
  options.val_tokens = source.val_tokens;
  options.command_line = args;
  options.only_row = request.row_in_child;
  options.rows = request.rows;
  const auto outcome = ab::execute_suite(suite, planned, context, source.tokens, options, collectives);
  RunOutcome result{outcome.interrupted  ? ab::interrupt_exit_status()
                    : outcome.failed > 0 ? kExitFailed
                                         : 0,
                    outcome.interrupted};
  if (!leader || child) return result;
  std::cout << "\n";
  ab::show_report_tables(outcome.files, ab::ReportSection::Runs);
  std::cout << outcome.ok << " ok" << (outcome.kept ? " (" + std::to_string(outcome.kept) + " kept from before)" : "")
            << ", " << outcome.skipped << " skipped, " << outcome.failed << " failed; results in "
            << paths.shown().string() << "\n";
  return result;
}

// The sweep's id in the folder of an earlier run of it (--resume), or nullopt.
std::optional<std::string> sweep_id_in(const std::filesystem::path& dir) {
  const auto doc = first_result_in(dir);
  if (!doc || !doc->contains("sweep") || !(*doc)["sweep"].is_object()) return std::nullopt;
  return (*doc)["sweep"].value("id", std::string());
}

// `args` without the options a sweep decides per point (each with its value, as "--x v" or "--x=v").
std::vector<std::string> without_options(const std::vector<std::string>& args, const std::vector<std::string>& names) {
  std::vector<std::string> kept;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto named = [&](const std::string& n) { return args[i] == n || args[i].starts_with(n + "="); };
    if (const auto it = std::find_if(names.begin(), names.end(), named); it != names.end()) {
      if (args[i] == *it) ++i;  // and its value
      continue;
    }
    kept.push_back(args[i]);
  }
  return kept;
}

// --sweep: the run at every point of the axes, one after another, each a run of its own in <sweep folder>/<point>;
// then a table of every configuration's speedup at every point.
int run_sweep(ab::Request& request, const std::vector<std::string>& args,
              const std::optional<sw::bench::DistEnv>& rank_env) {
  std::vector<ab::SweepAxis> axes;
  try {
    axes = ab::parse_sweep(request.sweep);
  } catch (const std::invalid_argument& e) {
    throw ab::UsageError(e.what());
  }
  // The option each axis sets, as the command line gave it.
  const std::map<std::string, bool> given{{"preset", request.preset.has_value()},
                                          {"seq_len", request.seq_len.has_value()},
                                          {"batch_size", request.batch_size.has_value()}};
  for (const auto& axis : axes)
    if (given.at(axis.name))
      throw ab::UsageError("--sweep " + axis.name + "=... and " + axis.option +
                           " exclude each other: the sweep sets it at every point");
  if (request.out && request.out->ends_with(".json"))
    throw ab::UsageError("--sweep writes a folder per point; give --out a directory, not a .json file");
  const auto points = ab::sweep_points(axes);

  // Every point must be a valid run before any runs (a sequence length longer than a preset's context, say).
  const ab::Suite suite = request.suite.empty() ? ab::single_configuration(request.enable, request.vs_baseline)
                                                : ab::find_suite(request.suite);
  const auto at_point = [&](const ab::SweepPoint& point) {
    ab::Request r = request;
    for (const auto& [axis, value] : point.values) {
      if (axis->name == "preset") r.preset = value;
      if (axis->name == "seq_len") r.seq_len = std::stoll(value);
      if (axis->name == "batch_size") r.batch_size = std::stoll(value);
    }
    r.sweep.clear();
    return r;
  };
  for (const auto& point : points) {
    ab::Request check = at_point(point);
    try {
      ab::resolve_run(check, suite);
    } catch (const ab::UsageError& e) {
      throw ab::UsageError("sweep point " + point.label() + ": " + e.what());
    }
  }

  const auto device = sw::bench::resolve_device(request.device);
  const auto resume_dir = request.resume ? std::optional(std::filesystem::absolute(*request.resume)) : std::nullopt;
  if (resume_dir && !std::filesystem::is_directory(*resume_dir))
    throw ab::UsageError("--resume " + *request.resume + ": no such directory (give the sweep's results folder)");
  const auto earlier = resume_dir ? sweep_id_in(*resume_dir) : std::nullopt;
  const std::string sweep_id = request.run_id ? *request.run_id
                               : earlier      ? *earlier
                                              : sw::bench::utc_timestamp(/*compact=*/true) + "_sweep_" +
                                               device_slug(device, {{"device_name", sw::bench::device_name(device)}});
  const auto folder = resume_dir    ? *resume_dir
                      : request.out ? std::filesystem::absolute(*request.out)
                                    : sw::bench::source_dir() / "results" / sweep_id;
  const bool leader = !rank_env || rank_env->rank == 0;
  if (leader)
    std::cout << "sweep " << sweep_id << ": " << points.size() << " points (" << points.front().label() << " ... "
              << points.back().label() << "); results in " << folder.string() << "\n";

  const auto common = without_options(args, {"--sweep", "--out", "--resume", "--run-id"});
  int status = 0;
  for (const auto& point : points) {
    ab::Request r = at_point(point);
    const auto point_folder = folder / point.slug();
    r.run_id = sweep_id + "_" + point.slug();
    r.sweep_point = ab::sweep_json(sweep_id, axes, point).dump();
    // A point an interrupted sweep never reached has no folder yet: it starts afresh there.
    const bool resume = resume_dir && std::filesystem::is_directory(point_folder);
    r.resume = resume ? std::optional(point_folder.string()) : std::nullopt;
    r.out = resume ? std::nullopt : std::optional(point_folder.string());
    auto point_args = common;
    for (const auto& [axis, value] : point.values) point_args.push_back(axis->option + "=" + value);
    point_args.push_back((resume ? "--resume=" : "--out=") + point_folder.string());
    point_args.push_back("--sweep-point=" + *r.sweep_point);
    if (leader)
      std::cout << "\n== sweep point " << point.index + 1 << "/" << points.size() << ": " << point.label() << " ==\n";
    auto outcome = run_once(r, point_args, rank_env);
    status = std::max(status, outcome.status);
    if (outcome.interrupted) return outcome.status;
  }
  if (leader) {
    std::cout << "\n";
    ab::show_report_tables({folder}, ab::ReportSection::Sweeps);
    std::cout << "sweep results in " << folder.string() << "\n";
  }
  return status;
}

int run(ab::Request& request, int argc, char** argv) {
  std::optional<sw::bench::DistEnv> rank_env;
  try {
    rank_env = sw::bench::dist_env_from_environment();
  } catch (const std::invalid_argument& e) {
    throw ab::UsageError(e.what());
  }
  if (!rank_env && request.nproc_per_node > 1) return ab::launch_ranks(request.nproc_per_node, argc, argv);
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!request.sweep.empty()) return run_sweep(request, args, rank_env);
  return run_once(request, args, rank_env).status;
}

}  // namespace

int main(int argc, char** argv) {
  sw::bench::count_cpu_tensor_bytes();  // CPU tensors' bytes and peak (bench/cpu_tensor_memory.h)
  ab::Request request;
  try {
    request = ab::parse_command_line(argc, argv);
    switch (request.action) {
      case ab::Request::Action::ListFlags:
        std::cout << (request.markdown ? ab::list_flags_markdown() : ab::list_flags(request.json, request.verbose));
        return 0;
      case ab::Request::Action::ListPresets: std::cout << ab::list_presets(request.json); return 0;
      case ab::Request::Action::ListSuites: std::cout << ab::list_suites(); return 0;
      case ab::Request::Action::Describe: {
        const auto device = request.preset ? c10::Device(c10::kCPU) : sw::bench::resolve_device(request.device);
        const std::string preset = request.preset.value_or(ab::default_preset(device));
        const auto model = ab::model_with_overrides(request, sw::model::preset(preset));
        const int64_t seq = request.seq_len.value_or(ab::default_seq_len(sw::model::preset(preset), model));
        const bool cuda = device.is_cuda() || request.device.rfind("cuda", 0) == 0;
        std::cout << ab::describe_preset(preset, model, seq, request.json, cuda);
        return 0;
      }
      case ab::Request::Action::Run: return run(request, argc, argv);
    }
  } catch (const ab::HelpRequested&) {
    return 0;
  } catch (const ab::UsageError& e) {
    std::cerr << "ablate: " << e.what() << "\nRun ./ablate --help for the options.\n";
    return kExitUsage;
  } catch (const std::invalid_argument& e) {
    std::cerr << "ablate: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "ablate: error: " << e.what() << "\n";
    return kExitFailed;
  }
  return 0;
}
