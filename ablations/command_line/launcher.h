// --nproc-per-node=N: starts N ranks of this same command on this machine, as torchrun would, and supervises them:
// when one rank fails or dies, the others are stopped, so a run ends with a clear error instead of hanging.
#pragma once

#include <chrono>

namespace stepwise::ablations {

// A loopback TCP port the kernel reports free right now (the rendezvous reports a clash clearly if it is taken
// before use, as with torchrun).
int free_port();

// Returns the exit status for the whole run: 0 when every rank succeeded, else the first failing rank's.
int launch_ranks(int nproc, int argc, char** argv);

}  // namespace stepwise::ablations
