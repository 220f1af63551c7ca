// A child process the harness starts and supervises: a Python row's step.py (bench/python/python_step.h), or a row
// of ablate itself under another host allocator (ablations/run/execute.cpp). When the run is interrupted the child is
// stopped (SIGTERM, then SIGKILL) instead of being left behind.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stepwise::bench {

// Environment changes for a child: each variable with its new value, or nullopt to unset it.
using EnvironmentChanges = std::vector<std::pair<std::string, std::optional<std::string>>>;

// Runs `argv` (argv[0] looked up on PATH) with `env` applied, its stdout and stderr into `log` (or the parent's when
// nullopt), calling `poll` now and then while it runs. When `interrupted` becomes true the child gets SIGTERM, then
// SIGKILL after a grace period. Returns the exit status, 128 + the signal when killed. Throws when fork fails.
int run_child_process(const std::vector<std::string>& argv, const EnvironmentChanges& env,
                      const std::optional<std::filesystem::path>& log, const std::atomic<bool>* interrupted,
                      const std::function<void()>& poll = nullptr);

// In a forked child: `env` applied, then `argv` (argv[0] looked up on PATH) in its place; exits 127 when it cannot.
[[noreturn]] void exec_in_child(const std::vector<std::string>& argv, const EnvironmentChanges& env);

// The wait both kinds of child share: until `finished` gives the exit status, calling `poll` now and then; when
// `interrupted` becomes true, `stop(SIGTERM)` (again until it returns true), then `stop(SIGKILL)` after a grace period.
int supervise(const std::function<std::optional<int>()>& finished, const std::function<bool(int)>& stop,
              const std::atomic<bool>* interrupted, const std::function<void()>& poll);

// This executable's path (/proc/self/exe), to start a row of it again.
std::filesystem::path this_executable();

// The interpreter a Python child runs in (a Python row, a data file's reader): STEPWISE_PYTHON, else the one the build
// found torch in.
std::string python_interpreter();

}  // namespace stepwise::bench
