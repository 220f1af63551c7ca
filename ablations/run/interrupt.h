// Ctrl-C and SIGTERM: the first signal asks the running configuration to stop at the next step boundary and the suite
// to end after writing it; a second one exits at once. A job scheduler's or a time limit's SIGTERM is handled as
// Ctrl-C is, so what finished is on disk and scratch files are removed.
#pragma once

#include <atomic>

namespace stepwise::ablations {

void install_interrupt_handler();
const std::atomic<bool>& interrupt_requested();
// The exit status an interrupted run ends with: 128 + the signal (130 for SIGINT, 143 for SIGTERM).
int interrupt_exit_status();

}  // namespace stepwise::ablations
