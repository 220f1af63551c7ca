// launch_ranks: fork/exec of /proc/self/exe with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT.
#include "ablations/command_line/launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace stepwise::ablations {

namespace {

// How long stopped ranks get to exit after SIGTERM before SIGKILL.
constexpr auto kTerminateGrace = std::chrono::seconds(10);
// A rank interrupted by Ctrl-C (130) or SIGTERM (143) ends on its own at a step boundary; the others are not stopped.
bool interrupted_exit(int code) { return code == 128 + SIGINT || code == 128 + SIGTERM; }

// SIGTERM to the launcher (a scheduler's time limit) is passed on to every rank, which end as after Ctrl-C.
volatile std::sig_atomic_t terminate_requested = 0;
extern "C" void on_sigterm(int) { terminate_requested = 1; }

std::vector<std::string> arguments_without_nproc(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--nproc-per-node=", 0) == 0) continue;
    if (a == "--nproc-per-node") {
      ++i;
      continue;
    }
    args.push_back(a);
  }
  return args;
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  return "ended";
}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

void stop_all(const std::map<pid_t, int>& running) {
  for (const auto& [pid, rank] : running) kill(pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + kTerminateGrace;
  std::map<pid_t, int> left = running;
  while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
    for (auto it = left.begin(); it != left.end();) {
      int status = 0;
      if (waitpid(it->first, &status, WNOHANG) == it->first)
        it = left.erase(it);
      else
        ++it;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (const auto& [pid, rank] : left) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
}

}  // namespace

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = 29500;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  if (fd >= 0) close(fd);
  return port;
}

int launch_ranks(int nproc, int argc, char** argv) {
  const std::string addr = std::getenv("MASTER_ADDR") ? std::getenv("MASTER_ADDR") : "127.0.0.1";
  const std::string port = std::getenv("MASTER_PORT") ? std::getenv("MASTER_PORT") : std::to_string(free_port());
  const auto args = arguments_without_nproc(argc, argv);
  std::vector<char*> child_argv;
  for (const auto& a : args) child_argv.push_back(const_cast<char*>(a.c_str()));
  child_argv.push_back(nullptr);

  // Ctrl-C reaches every rank through the terminal's process group; they stop together and exit 130.
  signal(SIGINT, SIG_IGN);  // the terminal sends Ctrl-C to every rank itself
  struct sigaction action {};
  action.sa_handler = on_sigterm;  // no SA_RESTART: waitpid returns EINTR and the loop passes the signal on
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  std::map<pid_t, int> running;
  for (int rank = 0; rank < nproc; ++rank) {
    const pid_t pid = fork();
    if (pid < 0) {
      std::cerr << "ablate: cannot start rank " << rank << ": " << std::strerror(errno) << "\n";
      stop_all(running);
      return 1;
    }
    if (pid == 0) {
      signal(SIGINT, SIG_DFL);
      setenv("RANK", std::to_string(rank).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(nproc).c_str(), 1);
      setenv("MASTER_ADDR", addr.c_str(), 1);
      setenv("MASTER_PORT", port.c_str(), 1);
      // As torchrun: ranks sharing a machine's cores must not each start a full-width thread pool.
      const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
      setenv("OMP_NUM_THREADS", std::to_string(std::max(1u, cores / static_cast<unsigned>(nproc))).c_str(), 0);
      execv("/proc/self/exe", child_argv.data());
      std::cerr << "ablate: exec failed for rank " << rank << ": " << std::strerror(errno) << "\n";
      _exit(127);
    }
    running[pid] = rank;
  }

  int result = 0;
  while (!running.empty()) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0 && errno == EINTR) {
      if (terminate_requested)
        for (const auto& [child, rank] : running) kill(child, SIGTERM);
      continue;
    }
    if (pid < 0) break;
    const int rank = running[pid];
    running.erase(pid);
    const int code = exit_code(status);
    if (code == 0) continue;
    if (result == 0) result = code;
    if (!running.empty() && !interrupted_exit(code)) {
      std::cerr << "ablate: rank " << rank << " " << describe(status) << "; stopping the other " << running.size()
                << " rank(s)\n";
      stop_all(running);
      running.clear();
    }
  }
  return result;
}

}  // namespace stepwise::ablations
