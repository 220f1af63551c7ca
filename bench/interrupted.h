// A run stopped by Ctrl-C or SIGTERM (ablations/run/interrupt.h sets the flag the engine polls between steps): one
// exception for every place that stops on it — the measured steps, a seed trained to a target, a Python row's process —
// so each configuration records "interrupted" the same way, with what was reached in its message.
#pragma once

#include <stdexcept>

namespace stepwise::bench {

struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace stepwise::bench
