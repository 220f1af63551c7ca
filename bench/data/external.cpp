// sha256sum and the project's Python, run without a shell (arguments are passed as they are) and read back.
#include "bench/data/external.h"

#include "bench/child_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <stdexcept>
#include <vector>

extern char** environ;

namespace stepwise::bench {

namespace {

// Reads meta.pkl's vocab_size without building any object a pickle could name (nanoGPT's is a plain dict).
constexpr const char* kReadPickleVocab = R"(import pickle, sys
class PlainData(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}: only plain data is read")
with open(sys.argv[1], "rb") as f:
    meta = PlainData(f).load()
size = meta.get("vocab_size") if isinstance(meta, dict) else None
if not isinstance(size, int) or isinstance(size, bool):
    sys.exit("no integer vocab_size in it")
print(size)
)";

struct Output {
  int status;        // the exit status; 127 when the program could not start
  std::string text;  // stdout and stderr together
};

// Runs argv[0] from PATH with stdout and stderr into one pipe.
Output run(const std::vector<std::string>& argv) {
  std::array<int, 2> pipe_fds{};
  if (pipe(pipe_fds.data()) != 0) throw std::runtime_error("cannot create a pipe to run " + argv.front());
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  Output out{127, ""};
  if (spawned != 0) {
    close(pipe_fds[0]);
    out.text = "cannot run " + argv.front();
    return out;
  }
  std::array<char, 4096> buffer{};
  for (ssize_t n; (n = read(pipe_fds[0], buffer.data(), buffer.size())) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.text.append(buffer.data(), static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return out;
}

std::string last_line(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  const auto newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

}  // namespace

std::string file_sha256(const std::filesystem::path& path) {
  const auto out = run({"sha256sum", "--", path.string()});
  const std::string digest = out.text.substr(0, 64);
  const bool hex = digest.size() == 64 && digest.find_first_not_of("0123456789abcdef") == std::string::npos;
  if (out.status != 0 || !hex)
    throw std::runtime_error("cannot hash " + path.string() + " with sha256sum: " + last_line(out.text));
  return digest;
}

int64_t pickle_vocab_size(const std::filesystem::path& meta_pkl) {
  const std::string python = python_interpreter();
  const auto out = run({python, "-c", kReadPickleVocab, meta_pkl.string()});
  const std::string line = last_line(out.text);
  try {
    size_t used = 0;
    const long long v = std::stoll(line, &used);
    if (out.status == 0 && used == line.size() && v > 0) return v;
  } catch (const std::exception&) {
  }
  throw std::runtime_error(meta_pkl.string() + ": cannot read its vocab_size with " + python + ": " + line);
}

}  // namespace stepwise::bench
