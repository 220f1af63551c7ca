// The flag table: every optimization stepwise can switch, each declared once as a component in
// ablations/flags/<name>.cpp (what it switches, where it applies, what it needs, where its code lives) and listed
// here in the order of Raschka's table, the memory flags after it. The CLI, --list-flags, the startup table, each
// result's flags_info and the reports are generated from it. Every flag is a positive boolean, off by default: the
// baseline is all off.
#pragma once

#include "ablations/loss_check.h"
#include "bench/run_config.h"

#include <c10/core/Device.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stepwise::ablations {

enum class Applies { Both, CudaOnly };
std::string to_string(Applies a);

struct Flag {
  std::string_view name;              // the same in the CLI, RunConfig/GPTConfig, the JSON and the reports
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
};

// Each component, defined in ablations/flags/<name>.cpp.
namespace flags {
extern const Flag dynamic_mask, tf32, fused_adamw, pinned_memory, bf16, native_layers, flash, compile, vocab_padding,
    max_batch, checkpoint, chunked_ce, host_allocator, fp8, zero1;
}  // namespace flags

// In the order of Raschka's table, which is also the order flags are listed and applied in; the memory flags
// (checkpoint, chunked_ce), the host allocator, FP8 and the sharded optimizer, which his table does not have, follow
// it.
const std::vector<const Flag*>& flag_table();
// nullptr if unknown.
const Flag* find_flag(std::string_view name);
std::vector<std::string> flag_names();

// Why the device lacks what the flag needs (a CUDA device, or one of a high enough compute capability), or the run
// the data-parallel ranks, or nullopt. Such a flag is recorded as skipped and the rest of the
// configuration runs; a flag's own check (Flag::unmet) instead skips the whole configuration (ablations/plan.cpp).
std::optional<std::string> unmet_precondition(const Flag& flag, const c10::Device& device, int world_size = 1);

// Parses "bf16,flash" (or "all"); throws std::invalid_argument for an unknown, repeated or empty name, listing the
// valid ones. The result is in flag-table order.
std::vector<std::string> parse_flag_list(const std::string& list);
// The loss check's class of a configuration: the loosest of its flags' (Exact for none).
MathClass math_class(const std::vector<std::string>& flags);

// Sorts names into flag-table order (unknown names are an error).
std::vector<std::string> in_table_order(const std::vector<std::string>& names);

}  // namespace stepwise::ablations
