#include "records/provenance.hpp"

#include <spawn.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "common/sha256.hpp"

extern char** environ;

namespace atlas::records {
namespace {

struct Captured {
  int status = -1;  // exit status, -1 when the program could not be run
  std::string out;
};

// Runs argv (no shell, so paths need no quoting) and captures stdout; stderr goes to /dev/null.
Captured run_capture(const std::vector<std::string>& argv) {
  Captured c;
  int fds[2];
  if (::pipe(fds) != 0) return c;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return c;
  }
  std::array<char, 65536> buf{};
  for (;;) {
    const ssize_t n = ::read(fds[0], buf.data(), buf.size());
    if (n > 0) c.out.append(buf.data(), static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  c.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return c;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

Captured git(const std::filesystem::path& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {"git", "-C", dir.string()});
  return run_capture(args);
}

// Value of the first "key : value" line of a /proc file whose key equals `key`.
std::string proc_field(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (trim(line.substr(0, colon)) == key) return trim(line.substr(colon + 1));
  }
  return {};
}

std::tm utc_tm(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::gmtime_r(&tt, &tm);
  return tm;
}

std::string format_utc(std::chrono::system_clock::time_point t, const char* fmt) {
  const std::tm tm = utc_tm(t);
  std::array<char, 64> buf{};
  const std::size_t n = std::strftime(buf.data(), buf.size(), fmt, &tm);
  return std::string(buf.data(), n);
}

}  // namespace

GitInfo collect_git(const std::filesystem::path& repo_dir) {
  GitInfo g;
  g.commit = "unknown";
  const auto head = git(repo_dir, {"rev-parse", "--verify", "HEAD"});
  if (head.status != 0) return g;
  // git walks up from repo_dir to the first enclosing .git: a source tree unpacked inside some
  // other repository (a tarball in a home directory under version control) would take that
  // repository's commit. The tree is a checkout only when it is the top level, or a directory
  // whose files that repository tracks.
  const auto top = git(repo_dir, {"rev-parse", "--show-toplevel"});
  std::error_code ec;
  if (top.status != 0) return g;
  if (!std::filesystem::equivalent(std::filesystem::path(trim(top.out)), repo_dir, ec)) {
    const auto tracked = git(repo_dir, {"ls-files", "--", "."});
    if (tracked.status != 0 || trim(tracked.out).empty()) return g;
  }
  g.commit = trim(head.out);
  const auto branch = git(repo_dir, {"rev-parse", "--abbrev-ref", "HEAD"});
  if (branch.status == 0) g.branch = trim(branch.out);
  const auto status = git(repo_dir, {"status", "--porcelain"});
  g.dirty = status.status == 0 && !trim(status.out).empty();
  if (g.dirty) {
    const auto diff = git(repo_dir, {"diff", "--no-color", "--no-ext-diff", "HEAD"});
    if (diff.status == 0) g.diff_sha256 = sha256_hex(diff.out);
  }
  return g;
}

std::optional<std::string> git_rev_parse(const std::filesystem::path& repo_dir, const std::string& rev) {
  // "--end-of-options" keeps a revision that starts with '-' from being read as an option.
  const auto r = git(repo_dir, {"rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}"});
  if (r.status != 0) return std::nullopt;
  const std::string sha = trim(r.out);
  if (sha.empty()) return std::nullopt;
  return sha;
}

std::set<std::string> tracked_though_ignored(const std::filesystem::path& dir) {
  std::set<std::string> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return out;
  // -z: names as stored, no quoting; paths come relative to `dir` (git -C runs there).
  const auto r = git(dir, {"ls-files", "-z", "--cached", "--ignored", "--exclude-standard", "--", "."});
  if (r.status != 0) return out;
  std::size_t start = 0;
  while (start < r.out.size()) {
    const std::size_t end = r.out.find('\0', start);
    const std::size_t stop = end == std::string::npos ? r.out.size() : end;
    if (stop > start) out.insert(r.out.substr(start, stop - start));
    start = stop + 1;
  }
  return out;
}

BuildInfo build_info() {
  BuildInfo b;
  b.compiler = ATLAS_BUILD_COMPILER;
  b.flags = trim(ATLAS_BUILD_FLAGS);
  b.build_type = ATLAS_BUILD_TYPE;
  b.cuda_version = ATLAS_BUILD_CUDA_VERSION;
  return b;
}

MachineInfo collect_machine() {
  MachineInfo m;
  m.cpu_model = proc_field("/proc/cpuinfo", "model name");
  if (m.cpu_model.empty()) m.cpu_model = "unknown";
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  m.cores = online > 0 ? static_cast<int>(online) : 0;
  // "MemTotal:       131072000 kB"
  const std::string mem = proc_field("/proc/meminfo", "MemTotal");
  if (!mem.empty()) {
    try {
      m.memory_bytes = std::stoll(mem) * 1024;
    } catch (const std::exception&) {
      m.memory_bytes = 0;
    }
  }
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) == 0) m.hostname = host.data();
  struct utsname u{};
  const std::string arch = ::uname(&u) == 0 ? std::string(u.machine) : std::string("unknown");
  m.machine_class = "cpu-" + std::to_string(m.cores) + "c-" + arch;
  return m;
}

std::string utc_iso(std::chrono::system_clock::time_point t) { return format_utc(t, "%Y-%m-%dT%H:%M:%SZ"); }
std::string utc_now_iso() { return utc_iso(std::chrono::system_clock::now()); }
std::string utc_compact(std::chrono::system_clock::time_point t) { return format_utc(t, "%Y%m%dT%H%M%SZ"); }

std::string new_run_id() {
  std::random_device rd;
  const std::uint64_t r = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  std::array<char, 16> hex{};
  std::snprintf(hex.data(), hex.size(), "%012llx", static_cast<unsigned long long>(r & 0xffffffffffffULL));
  return utc_compact(std::chrono::system_clock::now()) + "-" + hex.data();
}

}  // namespace atlas::records
