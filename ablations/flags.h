// The flag table: every optimization stepwise can switch, declared once. The CLI, --list-flags, the startup
// table, the JSON (flags_info) and the reports are generated from it. All flags are off by default.
#pragma once

#include "bench/run_config.h"

#include <c10/core/Device.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stepwise::ablations {

enum class Applies { Both, CudaOnly };
std::string to_string(Applies a);

// Choices that say *how* a flag acts when it is on; set by options, shared by every configuration of a run.
struct FlagOptions {
  bench::Bf16Mode bf16_mode = bench::Bf16Mode::Pure;
  bench::CopyMode pinned_mode = bench::CopyMode::PinnedAsync;
  model::SdpaBackend sdpa_backend = model::SdpaBackend::Auto;
};

struct FlagSpec {
  std::string_view name;
  std::string_view summary;    // one line: what turning it on does
  std::string_view reference;  // what the baseline (off) does
  std::string_view stage;      // where it acts: model, backend, optimizer, data, step, batch
  Applies applies;
  std::string_view precondition;  // empty, or what must hold; said when it cannot apply
  void (*apply)(bench::RunConfig&, const FlagOptions&);
};

// In the order of Raschka's table, which is also the order flags are listed and applied in.
const std::vector<FlagSpec>& flag_table();
// nullptr if unknown.
const FlagSpec* find_flag(std::string_view name);
std::vector<std::string> flag_names();

// Why the flag cannot apply on this device, or nullopt when it can.
std::optional<std::string> unmet_precondition(const FlagSpec& flag, const c10::Device& device);

// Parses "bf16,flash" (or "all"); throws std::invalid_argument for an unknown or repeated name, listing the valid
// ones. The result is in flag-table order.
std::vector<std::string> parse_flag_list(const std::string& list);
// Sorts names into flag-table order (unknown names are an error).
std::vector<std::string> in_table_order(const std::vector<std::string>& names);

}  // namespace stepwise::ablations
