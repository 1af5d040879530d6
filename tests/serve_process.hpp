#pragma once
// Child processes for CLI-level tests: ChildProcess spawns a binary with its stdout on a pipe;
// ServeProcess starts the real atlas-serve binary ($ATLAS_SERVE_EXE, set by tests/CMakeLists.txt)
// on a free loopback port, waits until it listens, and stops it with SIGTERM.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include "tests/built_exe.hpp"
#include "tests/skip.hpp"

extern char** environ;

namespace atlas::test {

/// A child process with its stdout on a pipe; killed (SIGKILL) if still running at the end.
struct ChildProcess {
  pid_t pid = -1;
  int out = -1;
  std::string captured;

  explicit ChildProcess(const std::vector<std::string>& argv) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    REQUIRE(posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    out = fds[0];
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (out >= 0) ::close(out);
  }
  /// Reads stdout until `needle` appears or `timeout_ms` passes.
  bool read_until(const std::string& needle, int timeout_ms) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (captured.find(needle) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()).count();
      if (left <= 0) return false;
      pollfd p{out, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
      char buf[4096];
      const ssize_t n = ::read(out, buf, sizeof buf);
      if (n <= 0) return captured.find(needle) != std::string::npos;
      captured.append(buf, static_cast<std::size_t>(n));
    }
    return true;
  }
  /// Waits for exit; returns the exit status, or -1 on timeout or signal death.
  int wait_exit(int timeout_ms) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < end) {
      int status = 0;
      const pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      ::usleep(10000);
    }
    return -1;
  }
};

/// The atlas-serve binary from $ATLAS_SERVE_EXE; "" when unset, the test case then skipped
/// (tests/built_exe.hpp, tests/skip.hpp: the caller returns).
inline std::string atlas_serve_exe() { return serve_exe_or_skip(); }

/// atlas-serve on 127.0.0.1 and a port the kernel picks (--port 0), started with `args` after
/// the host and port options; the constructor returns once it prints its URL (REQUIREd within
/// 30 s).
struct ServeProcess {
  ChildProcess child;
  std::string url;  ///< "http://127.0.0.1:PORT/v1"

  ServeProcess(const std::string& exe, const std::vector<std::string>& args) : child(argv(exe, args)) {
    REQUIRE(child.read_until("/v1 (model", 30000));
    const auto at = child.captured.find("http://127.0.0.1:");
    REQUIRE(at != std::string::npos);
    url = child.captured.substr(at, child.captured.find(" (model", at) - at);
  }
  /// SIGTERM, then the exit status (-1: no exit within `timeout_ms`); the rest of the server's
  /// output, its drain and stop lines included, is in child.captured afterwards.
  int stop(int timeout_ms = 20000) {
    REQUIRE(::kill(child.pid, SIGTERM) == 0);
    const int rc = child.wait_exit(timeout_ms);
    child.read_until("stopped (", 2000);
    return rc;
  }

 private:
  static std::vector<std::string> argv(const std::string& exe, const std::vector<std::string>& args) {
    std::vector<std::string> v{exe, "--host", "127.0.0.1", "--port", "0"};
    v.insert(v.end(), args.begin(), args.end());
    return v;
  }
};

}  // namespace atlas::test
