// --count-ops at the end of a run: per configuration, what one step dispatched in each implementation that counted
// it (the `op_counts` section of each result, bench/trace/op_counts.h), side by side: the totals of ATen operators,
// allocations and bytes per device, device activities on a GPU, then the operators whose counts differ, the largest
// difference first, and the engine's row minus Python eager's where both ran. The step that does more work shows
// which ops it is, where a timing shows only that it is slower.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace stepwise::ablations {

// One table per configuration that has counts, in the order of `documents`; empty when none has.
std::string op_count_table(const std::vector<nlohmann::json>& documents);

}  // namespace stepwise::ablations
