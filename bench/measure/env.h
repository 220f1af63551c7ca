// The environment a result was measured in: device, driver and library versions, compiler, git state, host, time.
#pragma once

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace stepwise::bench {

nlohmann::json capture_env(const c10::Device& device);

// Why this process runs bf16 on the CPU without the CPU's bf16 instructions (capture_env's cpu_bf16_emulated_because),
// or nullopt when it runs them: the hardware lacks avx512_bf16 and amx_bf16, or ATen's or oneDNN's ISA cap hides them.
std::optional<std::string> cpu_bf16_emulated();

// ISO 8601 UTC, e.g. 2026-11-21T10:15:00Z; compact = 20261121T101500Z (for file names).
std::string utc_timestamp(bool compact = false);

}  // namespace stepwise::bench
