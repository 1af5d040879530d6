#include "common/termination.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace atlas::termination {
namespace {

constexpr int kSlots = 64;
// Read by the signal handler: lock-free atomics only (async-signal-safe).
std::array<std::atomic<pid_t>, kSlots> g_groups{};
std::atomic<int> g_signal{0};
int g_pipe[2] = {-1, -1};

std::mutex& paths_mutex() {
  static std::mutex m;
  return m;
}
std::vector<std::filesystem::path>& paths() {
  static std::vector<std::filesystem::path> p;
  return p;
}

void forward(int sig) {
  for (auto& g : g_groups) {
    const pid_t pg = g.load();
    if (pg > 0) ::kill(-pg, sig);
  }
}

extern "C" void on_signal(int sig) {
  const int saved = errno;
  int expected = 0;
  if (g_signal.compare_exchange_strong(expected, sig)) {
    forward(sig);  // at once: a compile stops even if the watcher is slow to run
    const char c = 1;
    if (::write(g_pipe[1], &c, 1) < 0) {
    }
  }
  errno = saved;
}

int live_groups() {
  int n = 0;
  for (auto& g : g_groups) n += g.load() > 0 ? 1 : 0;
  return n;
}

[[noreturn]] void watch() {
  char c = 0;
  while (::read(g_pipe[0], &c, 1) < 0 && errno == EINTR) {
  }
  const int sig = g_signal.load();
  const int children = live_groups();
  // A grace period for the children to stop on the forwarded signal (make passes it to its
  // jobs, valgrind stops its program), then SIGKILL for whatever ignored it.
  for (int i = 0; i < 20 && live_groups() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (live_groups() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    forward(SIGKILL);
  }
  std::size_t removed = 0;
  {
    std::lock_guard lock(paths_mutex());
    for (const auto& p : paths()) {
      std::error_code ec;
      if (std::filesystem::remove_all(p, ec) > 0) ++removed;
    }
  }
  const std::string line = std::string("atlas: stopped by ") + (sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal") +
                           ": " + std::to_string(children) + " child process group" + (children == 1 ? "" : "s") + " signalled, " +
                           std::to_string(removed) + " temporary path" + (removed == 1 ? "" : "s") + " removed; exit " + std::to_string(128 + sig) + "\n";
  if (::write(STDERR_FILENO, line.data(), line.size()) < 0) {
  }
  ::_exit(128 + sig);
}

}  // namespace

void install() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (::pipe2(g_pipe, O_CLOEXEC) != 0) return;
    std::thread(watch).detach();
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;  // a second signal takes the default action: kills at once
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
    std::atexit(park_if_requested);
  });
}

int requested() { return g_signal.load(); }

void park_if_requested() {
  if (g_signal.load() == 0 || g_pipe[0] < 0) return;  // nothing asked, or nothing installed to finish the job
  for (;;) ::pause();
}

ChildGroup::ChildGroup(pid_t pgid) {
  for (int i = 0; i < kSlots; ++i) {
    pid_t expected = 0;
    if (g_groups[static_cast<std::size_t>(i)].compare_exchange_strong(expected, pgid)) {
      slot_ = i;
      break;
    }
  }
  // Registered after the child started: a signal that came in between was not forwarded to it.
  if (const int sig = g_signal.load(); sig != 0) ::kill(-pgid, sig);
}

ChildGroup::~ChildGroup() { release(); }

void ChildGroup::release() {
  if (slot_ >= 0) g_groups[static_cast<std::size_t>(slot_)].store(0);
  slot_ = -1;
}

TempPath::TempPath(std::filesystem::path path) : path_(std::move(path)) {
  std::lock_guard lock(paths_mutex());
  paths().push_back(path_);
}

TempPath::~TempPath() {
  std::lock_guard lock(paths_mutex());
  auto& p = paths();
  for (auto it = p.begin(); it != p.end(); ++it) {
    if (*it == path_) {
      p.erase(it);
      break;
    }
  }
}

}  // namespace atlas::termination
