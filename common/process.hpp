#pragma once
// Running a helper program (git, valgrind, a side of the gate's timed judgement) without a shell:
// arguments go to posix_spawnp as a vector, so branch names and paths are never interpreted by
// /bin/sh. One primitive: callers that watch the child while it runs (gates/measured_process)
// pass callbacks instead of spawning it themselves.
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace atlas {

struct ProcessResult {
  int exit_status = -1;  ///< exit code, or -1 when the program could not be started / was killed
  std::string out, err;
};

struct ProcessOptions {
  std::filesystem::path cwd;                          ///< empty: this process's
  std::map<std::string, std::string> env_overrides;   ///< set on top of this environment; an empty value unsets
  bool clear_env = false;                             ///< true: the child's environment is env_overrides alone
  int tick_ms = -1;                                   ///< > 0: call on_tick at least this often while it runs
  std::function<void(int pid)> on_tick;               ///< while the child runs (its output still open)
  /// Once the child has exited and before it is reaped: its /proc/<pid> entries are still there.
  std::function<void(int pid)> on_exit;
};

/// Runs `argv` (argv[0] a path or looked up on PATH) and captures stdout and stderr.
/// Throws atlas::Error when a pipe cannot be made; a program that cannot start gives
/// exit_status -1 and the reason in `err`.
ProcessResult run_process_with(const std::vector<std::string>& argv, const ProcessOptions& options);

/// The same in `cwd` with this process's environment.
ProcessResult run_process(const std::vector<std::string>& argv, const std::filesystem::path& cwd);

}  // namespace atlas
