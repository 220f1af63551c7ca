// Ctrl-C: the first SIGINT asks the running configuration to stop at the next step boundary and the suite to
// end after writing it; a second one exits at once.
#pragma once

#include <atomic>

namespace stepwise::ablations {

void install_interrupt_handler();
const std::atomic<bool>& interrupt_requested();

}  // namespace stepwise::ablations
