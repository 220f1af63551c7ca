// Signal handling: the first SIGINT or SIGTERM only sets a flag the runner checks between steps (and a running Python
// row's wait polls), so the configuration in flight is recorded as interrupted, every finished result stays on disk and
// scratch files are removed; a second signal exits at once.
#include "ablations/run/interrupt.h"

#include <unistd.h>
#include <csignal>

namespace stepwise::ablations {

namespace {

std::atomic<bool> requested{false};
std::atomic<int> received{SIGINT};

extern "C" void on_signal(int signal) {
  if (requested.exchange(true)) _exit(128 + signal);
  received = signal;
  constexpr char kMessage[] =
      "\n[stepwise] interrupted: finishing the current step and writing results "
      "(signal again to quit now)\n";
  (void)!write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
}

}  // namespace

void install_interrupt_handler() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

const std::atomic<bool>& interrupt_requested() { return requested; }

int interrupt_exit_status() { return 128 + received.load(); }

}  // namespace stepwise::ablations
