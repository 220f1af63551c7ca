// run_in_python_server: the harness's side of bench/python/serve.py's protocol over a socket pair: "ready" once, then
// per row a request directory in, "started PID" and "exited STATUS" out.
#include "bench/python/python_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

namespace stepwise::bench {

namespace {

// One `step.py --serve` process and the socket to it.
class PythonServer {
 public:
  PythonServer(std::string interpreter, std::filesystem::path script, EnvironmentChanges env)
      : interpreter_(std::move(interpreter)), script_(std::move(script)), env_(std::move(env)) {}
  PythonServer(const PythonServer&) = delete;
  PythonServer& operator=(const PythonServer&) = delete;
  // Closing the socket ends the server once its row (if any) is done.
  ~PythonServer() { shut_down(/*kill_it=*/false); }

  bool serves(const std::string& interpreter, const std::filesystem::path& script,
              const EnvironmentChanges& env) const {
    return socket_ >= 0 && interpreter == interpreter_ && script == script_ && env == env_;
  }

  // Starts the process and waits for its "ready" (its imports done); false when it did not come.
  bool start(const std::atomic<bool>* interrupted) {
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return false;
    std::fflush(nullptr);
    pid_ = fork();
    if (pid_ < 0) {
      close(fds[0]);
      close(fds[1]);
      return false;
    }
    if (pid_ == 0) {
      dup2(fds[1], STDIN_FILENO);  // dup2 clears close-on-exec on the copies
      dup2(fds[1], STDOUT_FILENO);
      // What the server itself prints is noise: a row's output goes to its step.log, and a server that fails to
      // start is replaced by a cold start, whose step.log says why.
      if (const int null = open("/dev/null", O_WRONLY); null >= 0) dup2(null, STDERR_FILENO);
      exec_in_child({interpreter_, script_.string(), "--serve"}, env_);
    }
    close(fds[1]);
    socket_ = fds[0];
    std::optional<std::string> line;
    supervise(
        [&]() -> std::optional<int> {
          line = next_line();
          return line || eof_ ? std::optional<int>(0) : std::nullopt;
        },
        [&](int signal) { return kill(pid_, signal) == 0; }, interrupted, nullptr);
    if (line == "ready") return true;
    shut_down(/*kill_it=*/true);
    return false;
  }

  // One row; nullopt when the server ended before the row began.
  std::optional<int> run(const std::filesystem::path& request_dir, const std::atomic<bool>* interrupted,
                         const std::function<void()>& poll) {
    const std::string request = request_dir.string() + "\n";
    if (send(socket_, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
      shut_down(/*kill_it=*/true);
      return std::nullopt;
    }
    pid_t row = -1;
    std::optional<int> status;
    supervise(
        [&]() -> std::optional<int> {
          while (const auto line = next_line()) {
            if (line->starts_with("started "))
              row = std::atoi(line->c_str() + 8);
            else if (line->starts_with("exited "))
              status = std::atoi(line->c_str() + 7);
          }
          return status || eof_ ? std::optional<int>(0) : std::nullopt;
        },
        [&](int signal) { return row > 0 && kill(row, signal) == 0; }, interrupted, poll);
    if (status) return status;
    shut_down(/*kill_it=*/true);  // the server died: its row, if it began, goes with it
    if (row <= 0) return std::nullopt;
    kill(row, SIGKILL);
    return 128 + SIGKILL;
  }

 private:
  // A complete line if one has arrived (without its newline), never blocking; eof_ once the server is gone.
  std::optional<std::string> next_line() {
    char buffer[256];
    while (true) {
      if (const auto end = pending_.find('\n'); end != std::string::npos) {
        auto line = pending_.substr(0, end);
        pending_.erase(0, end + 1);
        return line;
      }
      const ssize_t n = recv(socket_, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n > 0) {
        pending_.append(buffer, static_cast<size_t>(n));
        continue;
      }
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) eof_ = true;
      return std::nullopt;
    }
  }

  void shut_down(bool kill_it) {
    if (socket_ >= 0) close(socket_);
    socket_ = -1;
    if (pid_ <= 0) return;
    if (kill_it) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    } else {
      waitpid(pid_, nullptr, WNOHANG);  // an idle server exits at the closed socket; init reaps it if not yet
    }
    pid_ = -1;
  }

  std::string interpreter_;
  std::filesystem::path script_;
  EnvironmentChanges env_;
  pid_t pid_ = -1;
  int socket_ = -1;
  std::string pending_;
  bool eof_ = false;
};

}  // namespace

std::optional<int> run_in_python_server(const std::string& interpreter, const std::filesystem::path& script,
                                        const std::filesystem::path& request_dir, const EnvironmentChanges& env,
                                        const std::atomic<bool>* interrupted, const std::function<void()>& poll) {
  if (const char* warm = std::getenv("STEPWISE_PYTHON_WARM_START"); warm && std::string_view(warm) == "0")
    return std::nullopt;
  static std::mutex mutex;  // one row at a time through the one server
  static std::unique_ptr<PythonServer> server;
  static bool failed_to_start = false;
  const std::lock_guard lock(mutex);
  if (server && !server->serves(interpreter, script, env)) server.reset();
  if (!server) {
    if (failed_to_start) return std::nullopt;
    server = std::make_unique<PythonServer>(interpreter, script, env);
    if (!server->start(interrupted)) {
      server.reset();
      if (interrupted && interrupted->load()) return 128 + SIGTERM;
      failed_to_start = true;
      return std::nullopt;
    }
  }
  return server->run(request_dir, interrupted, poll);
}

}  // namespace stepwise::bench
