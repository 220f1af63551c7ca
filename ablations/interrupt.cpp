// Ctrl-C handling: the first SIGINT only sets a flag the runner checks between steps, so the configuration in
// flight is recorded as interrupted and every finished result stays on disk; a second SIGINT exits at once.
#include "ablations/interrupt.h"

#include <csignal>
#include <unistd.h>

namespace stepwise::ablations {

namespace {

std::atomic<bool> requested{false};

extern "C" void on_sigint(int) {
  if (requested.exchange(true)) _exit(130);
  constexpr char kMessage[] = "\n[stepwise] interrupted: finishing the current step and writing results "
                              "(Ctrl-C again to quit now)\n";
  (void)!write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
}

}  // namespace

void install_interrupt_handler() {
  struct sigaction action {};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
}

const std::atomic<bool>& interrupt_requested() { return requested; }

}  // namespace stepwise::ablations
