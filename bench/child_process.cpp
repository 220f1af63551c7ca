// run_child_process: fork, the environment, exec, and a wait that polls and stops the child on interruption.
#include "bench/child_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace stepwise::bench {

namespace {

// How long a stopped child gets to exit after SIGTERM before SIGKILL.
constexpr auto kStopGrace = std::chrono::seconds(10);
// How often the wait looks at the interruption flag.
constexpr auto kWaitInterval = std::chrono::milliseconds(20);
// How often `poll` runs while the child runs.
constexpr auto kPollInterval = std::chrono::milliseconds(500);

}  // namespace

int supervise(const std::function<std::optional<int>()>& finished, const std::function<bool(int)>& stop,
              const std::atomic<bool>* interrupted, const std::function<void()>& poll) {
  std::optional<std::chrono::steady_clock::time_point> stopped_at;
  auto polled = std::chrono::steady_clock::now();
  while (true) {
    if (const auto status = finished()) return *status;
    if (poll && std::chrono::steady_clock::now() - polled >= kPollInterval) {
      poll();
      polled = std::chrono::steady_clock::now();
    }
    if (interrupted && interrupted->load()) {
      const auto now = std::chrono::steady_clock::now();
      if (!stopped_at) {
        if (stop(SIGTERM)) stopped_at = now;
      } else if (now - *stopped_at > kStopGrace) {
        stop(SIGKILL);
      }
    }
    std::this_thread::sleep_for(kWaitInterval);
  }
}

namespace {

int exit_status(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

void exec_in_child(const std::vector<std::string>& argv, const EnvironmentChanges& env) {
  for (const auto& [name, value] : env) {
    if (value)
      setenv(name.c_str(), value->c_str(), 1);
    else
      unsetenv(name.c_str());
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  std::fprintf(stderr, "cannot run %s\n", args[0]);
  _exit(127);
}

int run_child_process(const std::vector<std::string>& argv, const EnvironmentChanges& env,
                      const std::optional<std::filesystem::path>& log, const std::atomic<bool>* interrupted,
                      const std::function<void()>& poll) {
  std::fflush(nullptr);  // what the parent printed comes before what the child prints
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("cannot start " + argv.at(0) + ": fork failed");
  if (pid == 0) {
    if (log) {
      if (std::FILE* out = std::fopen(log->c_str(), "w")) {
        dup2(fileno(out), STDOUT_FILENO);
        dup2(fileno(out), STDERR_FILENO);
      }
    }
    exec_in_child(argv, env);
  }
  const auto finished = [pid]() -> std::optional<int> {
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return exit_status(status);
    if (done < 0 && errno != EINTR) return exit_status(status);
    return std::nullopt;
  };
  return supervise(
      finished, [pid](int signal) { return kill(pid, signal) == 0; }, interrupted, poll);
}

std::filesystem::path this_executable() { return std::filesystem::read_symlink("/proc/self/exe"); }

std::string python_interpreter() {
  if (const char* py = std::getenv("STEPWISE_PYTHON"); py && *py) return py;
  return STEPWISE_PYTHON_EXECUTABLE;
}

}  // namespace stepwise::bench
