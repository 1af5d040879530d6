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
/// (tests/skip.hpp: the caller returns).
inline std::optional<CliRunner> cli_runner(const std::string& scratch_name) {
  const char* exe = std::getenv("ATLAS_BENCH_EXE");
  if (!exe || !*exe || !std::filesystem::exists(exe)) {
    skip_case("ATLAS_BENCH_EXE is not set (run through ctest)");
    return std::nullopt;
  }
  return CliRunner{exe, scratch_dir(scratch_name)};
}

}  // namespace atlas::test
