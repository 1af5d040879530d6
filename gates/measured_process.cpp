#include "gates/measured_process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/error.hpp"

extern char** environ;

namespace atlas::gates {
namespace {

std::string read_small_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) return {};
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/// Records each thread's latest run-queue wait; threads that exit keep their last value.
void sample_waits(pid_t pid, std::map<long, unsigned long long>& waits, bool& any) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    if (auto w = parse_schedstat_wait(read_small_file(dir + "/" + e->d_name + "/schedstat"))) {
      waits[std::atol(e->d_name)] = *w;
      any = true;
    }
  }
  ::closedir(d);
}

std::optional<CpuTimes> read_cpu_times() { return parse_proc_stat_cpu(read_small_file("/proc/stat")); }

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::optional<unsigned long long> parse_schedstat_wait(std::string_view line) {
  std::istringstream in{std::string(line)};
  unsigned long long on_cpu = 0, wait = 0, slices = 0;
  if (!(in >> on_cpu >> wait >> slices)) return std::nullopt;
  return wait;
}

std::optional<CpuTimes> parse_proc_stat_cpu(std::string_view text) {
  const auto nl = text.find('\n');
  std::istringstream in{std::string(text.substr(0, nl))};
  std::string label;
  if (!(in >> label) || label != "cpu") return std::nullopt;
  CpuTimes t;
  unsigned long long v = 0;
  int i = 0;
  // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in user.
  while (in >> v) {
    if (i < 8) t.total += v;
    if (i == 7) t.steal = v;
    ++i;
  }
  if (i < 4) return std::nullopt;
  return t;
}

MeasuredProcess run_measured(const std::vector<std::string>& argv, const std::filesystem::path& cwd,
                             const std::map<std::string, std::string>& env_overrides) {
  if (argv.empty()) throw Error("run_measured: empty argv");
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0)
    throw Error(std::string("pipe: ") + std::strerror(errno));
  Fd out_r{out_pipe[0]}, out_w{out_pipe[1]}, err_r{err_pipe[0]}, err_w{err_pipe[1]};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out_w.fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, err_w.fd, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (env_overrides.count(kv.substr(0, eq))) continue;
    env_strings.push_back(kv);
  }
  for (const auto& [k, v] : env_overrides)
    if (!v.empty()) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  MeasuredProcess result;
  const auto cpu_before = read_cpu_times();
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    result.err = argv[0] + ": " + std::strerror(rc);
    return result;
  }
  ::close(out_w.fd);
  out_w.fd = -1;
  ::close(err_w.fd);
  err_w.fd = -1;
  std::map<long, unsigned long long> waits;
  pollfd fds[2] = {{out_r.fd, POLLIN, 0}, {err_r.fd, POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buf[65536];
  // Sample every 20 ms while output flows; a thread's final wait is read when it has exited.
  while (open_fds > 0) {
    const int n = ::poll(fds, 2, 20);
    if (n < 0 && errno != EINTR) break;
    sample_waits(pid, waits, result.schedstat_available);
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
  // The child has closed its output (normally: exited). Read the zombie's stats, then reap it.
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  sample_waits(pid, waits, result.schedstat_available);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto cpu_after = read_cpu_times();
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  unsigned long long total_wait = 0;
  for (const auto& [tid, w] : waits) total_wait += w;
  result.run_queue_wait_s = static_cast<double>(total_wait) * 1e-9;
  if (cpu_before && cpu_after && cpu_after->total > cpu_before->total)
    result.steal_share = static_cast<double>(cpu_after->steal - cpu_before->steal) /
                         static_cast<double>(cpu_after->total - cpu_before->total);
  return result;
}

}  // namespace atlas::gates
