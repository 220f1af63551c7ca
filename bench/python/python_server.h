// The Python rows' warm start on a CPU: one `step.py --serve` process per ablate process (bench/python/serve.py)
// imports torch once and forks a fresh child per row, so a row no longer pays the interpreter's start-up and torch's
// import, seconds each, more than a tiny step's whole measurement. Each row still runs in a process of its own.
#pragma once

#include "bench/child_process.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace stepwise::bench {

// Runs `script` (bench/python/step.py) on `request_dir` in a child of the warm server for `interpreter` and `env`,
// starting the server on first use (and again when `interpreter` or `env` differ, or it died). The child's output goes
// to request_dir/step.log. Returns the exit status as run_child_process does, or nullopt when the server could not
// start or ended before the row began: the caller then runs the row in an interpreter of its own, which reports what
// went wrong. A server that failed to start is not tried again in this process. STEPWISE_PYTHON_WARM_START=0 turns
// the warm start off. `interrupted` and `poll` as run_child_process: an interruption stops the row's child.
std::optional<int> run_in_python_server(const std::string& interpreter, const std::filesystem::path& script,
                                        const std::filesystem::path& request_dir, const EnvironmentChanges& env,
                                        const std::atomic<bool>* interrupted, const std::function<void()>& poll);

}  // namespace stepwise::bench
