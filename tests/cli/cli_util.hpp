#pragma once
// Runs the atlas-bench executable that ctest names in ATLAS_BENCH_EXE, in a fresh scratch
// directory, capturing stdout and stderr.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gates/process.hpp"
#include "tests/built_exe.hpp"
#include "tests/test_data.hpp"
#include "tests/skip.hpp"

namespace atlas::test {

struct CliRunner {
  std::string exe;
  std::filesystem::path cwd;
  gates::ProcessResult operator()(std::vector<std::string> args) const {
    args.insert(args.begin(), exe);
    return gates::run_process(args, cwd);
  }
};

/// Null when ATLAS_BENCH_EXE is not set, i.e. outside ctest: the test case is then skipped
/// (tests/built_exe.hpp, tests/skip.hpp: the caller returns).
inline std::optional<CliRunner> cli_runner(const std::string& scratch_name) {
  const std::string exe = bench_exe_or_skip();
  if (exe.empty()) return std::nullopt;
  return CliRunner{exe, scratch_dir(scratch_name)};
}

}  // namespace atlas::test
