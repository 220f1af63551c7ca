// The end of a sweep: each configuration's speedup over its point's baseline, one column per point.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace stepwise::ablations {

// A sweep's summary (ablations/run/sweep.h): one row per configuration of the suite, one column per point (`points`,
// the points' labels; `documents`, each point's result documents), each cell the configuration's speedup over that
// point's baseline with its 95% interval, or why it has none. Stepwise's engine rows only.
std::string sweep_table(const std::vector<std::string>& points,
                        const std::vector<std::vector<nlohmann::json>>& documents);

}  // namespace stepwise::ablations
