// --nproc-per-node=N: starts N ranks of this same command on this machine, as torchrun would, and supervises them:
// when one rank fails or dies, the others are stopped, so a run ends with a clear error instead of hanging.
#pragma once

#include <chrono>

namespace stepwise::ablations {

// Returns the exit status for the whole run: 0 when every rank succeeded, else the first failing rank's.
int launch_ranks(int nproc, int argc, char** argv);

}  // namespace stepwise::ablations
