#include "common/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "common/error.hpp"
#include "common/machine_error.hpp"
#include "common/termination.hpp"

extern char** environ;

namespace atlas {
namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0) throw MachineError(std::string("pipe: ") + std::strerror(errno));
  }
  ~Pipe() {
    for (int f : fd) {
      if (f >= 0) ::close(f);
    }
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
};

/// This process's environment with `overrides` applied ("" unsets).
std::vector<std::string> environment_with(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    if (overrides.count(kv.substr(0, kv.find('=')))) continue;
    env.push_back(kv);
  }
  for (const auto& [k, v] : overrides)
    if (!v.empty()) env.push_back(k + "=" + v);
  return env;
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const std::filesystem::path& cwd) {
  ProcessOptions o;
  o.cwd = cwd;
  return run_process_with(argv, o);
}

ProcessResult run_process_with(const std::vector<std::string>& argv, const ProcessOptions& o) {
  if (argv.empty()) throw Error("run_process: empty argv");
  Pipe out, err;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out.fd[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, err.fd[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (!o.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, o.cwd.c_str());
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  std::vector<char*> envp;
  if (o.clear_env) {
    for (const auto& [k, v] : o.env_overrides)
      if (!v.empty()) env_strings.push_back(k + "=" + v);
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
  } else if (!o.env_overrides.empty()) {
    env_strings = environment_with(o.env_overrides);
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
  }
  ProcessResult result;
  if (const int sig = termination::requested(); sig != 0) {
    posix_spawn_file_actions_destroy(&fa);
    result.err = argv[0] + ": not started, this process is stopping on signal " + std::to_string(sig);
    return result;
  }
  // The child leads its own process group, so a SIGTERM to this process reaches the whole tree
  // under it (make -> ninja -> the compilers; valgrind -> its program): common/termination.hpp.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &fa, &attr, args.data(), envp.empty() ? environ : envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    result.err = argv[0] + ": " + std::strerror(rc);
    return result;
  }
  termination::ChildGroup group(pid);
  out.close_end(1);
  err.close_end(1);
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buf[65536];
  const int timeout = o.on_tick && o.tick_ms > 0 ? o.tick_ms : -1;
  while (open_fds > 0) {
    const int n = ::poll(fds, 2, timeout);
    if (n < 0 && errno != EINTR) break;
    if (o.on_tick) o.on_tick(static_cast<int>(pid));
    if (n <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  if (o.on_exit) {
    // The child has closed its output (normally: exited). Wait without reaping, so its /proc
    // entries can still be read.
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
    }
    o.on_exit(static_cast<int>(pid));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  group.release();
  // A child stopped by our own SIGINT / SIGTERM: this thread must not go on to the next step
  // (or exit with its own code) while the watcher cleans up and exits 128 + signal.
  termination::park_if_requested();
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace atlas
