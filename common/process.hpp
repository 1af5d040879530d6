#pragma once
// Running a helper program (git, valgrind) without a shell: arguments go to posix_spawnp as a vector, so
// branch names and paths are never interpreted by /bin/sh.
#include <filesystem>
#include <string>
#include <vector>

namespace atlas {

struct ProcessResult {
  int exit_status = -1;  ///< exit code, or -1 when the program could not be started / was killed
  std::string out, err;
};

/// Runs `argv` (argv[0] looked up on PATH) in `cwd` and captures stdout and stderr.
/// Throws atlas::Error when spawning fails for a reason other than the program being absent.
ProcessResult run_process(const std::vector<std::string>& argv, const std::filesystem::path& cwd);

}  // namespace atlas
