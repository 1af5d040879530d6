#pragma once
// Runs a shell command for the CLI tests and collects what it prints: one helper instead of a
// popen loop per test file.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace atlas::test {

struct ShellResult {
  int rc = -1;      ///< exit status; -1 when the command could not start or was killed by a signal
  std::string out;  ///< its stdout (add " 2>&1" to the command for stderr too)
};

/// Runs `cmd` through /bin/sh exactly as given and waits for it.
inline ShellResult run_shell(const std::string& cmd) {
  ShellResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) {
    r.out = "popen failed: " + cmd;
    return r;
  }
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;) r.out.append(buf.data(), n);
  const int status = ::pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace atlas::test
