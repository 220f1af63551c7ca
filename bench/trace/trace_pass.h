// --trace: a few more steps under CUPTI after the timed ones (never during them), summarised for the JSON.
#pragma once

#include "bench/step/train_step.h"

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

namespace stepwise::bench {

// Each traced step is bracketed by a device synchronisation so kernels are attributed to their step; that is
// why tracing happens only after measurement. On a CPU, or when CUPTI is taken, records "trace unavailable".
nlohmann::json trace_steps(const c10::Device& device, Step& step, size_t steps);

}  // namespace stepwise::bench
