#pragma once
// A stand-in for a prebuilt merge-base binary (--base-bin) in a gate test: a shell script that
// answers --version with the line a build of `commit` prints ("atlas-bench 0.1.0 (commit <sha>,
// clean tree)") and runs `exe` for everything else. The gate's check of --base-bin reads that
// line, so a scratch repository's merge-base can be named without building it. That a script can
// say so is the check's limit (docs/gates.md): it catches a wrong or stale binary, not a forged one.
#include <filesystem>
#include <string>

#include "common/atomic_file.hpp"

namespace atlas::test {

/// Writes `dir`/atlas-bench (mode 0755); `version_line` is what --version prints.
inline std::filesystem::path base_bin_wrapper(const std::filesystem::path& dir, const std::string& exe,
                                              const std::string& version_line) {
  std::filesystem::create_directories(dir);
  const auto path = dir / "atlas-bench";
  write_file_atomic(path, "#!/bin/sh\nif [ \"$1\" = \"--version\" ]; then echo '" + version_line +
                              "'; exit 0; fi\nexec '" + exe + "' \"$@\"\n");
  std::filesystem::permissions(path, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                         std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                                         std::filesystem::perms::others_exec);
  return path;
}

/// The --version line of a clean build of `commit`.
inline std::string clean_build_line(const std::string& commit) {
  return "atlas-bench 0.1.0 (commit " + commit + ", clean tree)";
}

}  // namespace atlas::test
