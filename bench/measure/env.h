// The environment a result was measured in: device, driver and library versions, compiler, git state, host, time.
#pragma once

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace stepwise::bench {

nlohmann::json capture_env(const c10::Device& device);

// ISO 8601 UTC, e.g. 2026-11-21T10:15:00Z; compact = 20261121T101500Z (for file names).
std::string utc_timestamp(bool compact = false);

}  // namespace stepwise::bench
