// Resolves a Request against the device and the suite: preset and timing defaults per device, and the
// precedence for how flags act (command line > suite file > built-in default).
#pragma once

#include "ablations/cli.h"
#include "ablations/plan.h"
#include "ablations/suite.h"

namespace stepwise::ablations {

// Throws UsageError for anything the user can fix (no GPU for --device=cuda, sequence longer than the
// preset's context, a suite option with an invalid value).
Settings resolve_settings(const Request& request, const Suite& suite);

// The preset used when none is given: gpt2-124m on a GPU, mini on a CPU.
std::string default_preset(const c10::Device& device);

}  // namespace stepwise::ablations
