// The flag table: every optimization stepwise can switch, each declared once as a component in
// ablations/flags/<name>.cpp (what it switches, where it applies, what it needs, where its code lives, the options
// that say how it acts) that adds itself to the table, at the position it declares: Raschka's table in its order, the
// memory flags after it. The CLI and its options, the suite files' options, --list-flags, the startup table, each
// result's flags_info and option values, the docs' tables and the reports are generated from it. Every flag is a
// positive boolean, off by default: the baseline is all off.
#pragma once

#include "ablations/flag_table/flag_option.h"
#include "ablations/flag_table/math_class.h"
#include "bench/run_config.h"
#include "model/enum_names.h"

#include <c10/core/Device.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stepwise::ablations {

enum class Applies { Both, CudaOnly };
inline constexpr auto kAppliesNames =
    model::enum_names<Applies>("device kind", {{Applies::Both, "cpu+cuda"}, {Applies::CudaOnly, "cuda"}});
std::string to_string(Applies a);

struct Flag {
  std::string_view name;  // the same in the CLI, RunConfig/GPTConfig, the JSON and the reports
  // Where it stands in the table, which is also the order flags are listed and applied in: Raschka's step times 10
  // for his ten, the flags his table does not have after them. The gaps leave room to place a flag between two.
  int position = 0;
  std::string_view summary;           // one line: what turning it on does
  std::string_view reference;         // what the baseline (off) does
  std::string_view stage;             // where it acts: model, backend, optimizer, data, step, batch
  MathClass math = MathClass::Exact;  // what it may change in the loss curve: the loss check's tolerance class
  Applies applies = Applies::Both;
  std::string_view precondition = {};  // empty, or what the device must have; said when it cannot apply
  // CudaOnly: the least compute capability the flag needs, (major, minor); (0, 0) = any CUDA device.
  std::pair<int, int> min_compute_capability = {0, 0};
  // The data-parallel ranks the flag needs (zero1 shards across them); fewer: the flag is skipped, the rest runs.
  int min_world_size = 1;
  // Flags it needs in effect beside it (fp8 casts from bf16); without them the flag is skipped, the rest runs.
  std::vector<std::string_view> needs = {};
  std::vector<std::string_view> code;          // the files that hold its effect (./ablate --list-flags --verbose)
  void (*apply)(bench::RunConfig&) = nullptr;  // switches the RunConfig field of its own name
  // Why it cannot run a configuration the device could (a pinned SDPA kernel without an implementation), or nullopt.
  std::optional<std::string> (*unmet)(const bench::RunConfig&) = nullptr;
  // How it acts (--bf16-mode, --ce-chunk-rows, ...): ablations/flag_table/flag_option.h.
  std::vector<FlagOption> options = {};
};

// Adds a flag to the table. Each ablations/flags/<name>.cpp holds one at namespace scope, so linking the file is what
// registers its flag (the files are linked whole: ablations/CMakeLists.txt).
struct FlagRegistration {
  explicit FlagRegistration(Flag flag);
};

// Every registered flag, by position. Throws std::logic_error when two flags share a name, an option name or a
// position.
const std::vector<const Flag*>& flag_table();
// nullptr if unknown.
const Flag* find_flag(std::string_view name);
std::vector<std::string> flag_names();
// What "all" means (--enable=all, a suite's "flags": "all"): every flag that makes the step faster or leaner. The
// learning flags (class learning: the speedrun's) train another function, so they are asked for by name or by the
// speedrun suites.
std::vector<std::string> all_flag_names();

// A flag's option and the flag it belongs to, found by the option's name (bf16_mode); nullopt if none has it.
struct OptionOfFlag {
  const Flag* flag;
  const FlagOption* option;
};
std::optional<OptionOfFlag> find_option(std::string_view name);
// The options a suite file may set, in table order.
std::vector<std::string> suite_option_names();

// Why the device lacks what the flag needs (a CUDA device, or one of a high enough compute capability), or the run
// the data-parallel ranks, or nullopt. Such a flag is recorded as skipped and the rest of the
// configuration runs; a flag's own check (Flag::unmet) instead skips the whole configuration (ablations/run/plan.cpp).
std::optional<std::string> unmet_precondition(const Flag& flag, const c10::Device& device, int world_size = 1);

// Parses "bf16,flash" (or "all"); throws std::invalid_argument for an unknown, repeated or empty name, listing the
// valid ones. The result is in flag-table order.
std::vector<std::string> parse_flag_list(const std::string& list);
// The loss check's class of a configuration: the loosest of its flags' (Exact for none).
MathClass math_class(const std::vector<std::string>& flags);

// Sorts names into flag-table order (unknown names are an error).
std::vector<std::string> in_table_order(const std::vector<std::string>& names);

}  // namespace stepwise::ablations
