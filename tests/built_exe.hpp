#pragma once
// The project's binaries a test runs (atlas-bench, atlas-serve), found one way. ctest hands each
// test their paths in ATLAS_BENCH_EXE and ATLAS_SERVE_EXE (tests/CMakeLists.txt). Unset means the
// test binary was started by hand, outside ctest: the case reports Skipped (tests/skip.hpp). Set
// to something that is not an executable file means a broken build or a mistyped path: the case
// fails and names it, since Skipped would hide a machine that is broken (each test once read the
// variable itself, and most skipped on a missing file with "is not set").
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "tests/skip.hpp"

namespace atlas::test {

/// What environment variable `var` says about a binary to run: exactly one field is set.
struct BuiltExe {
  std::string path;   ///< an executable regular file
  std::string skip;   ///< the variable is unset or empty: why the case is Skipped
  std::string error;  ///< the variable names no executable file: why the case fails
};

inline BuiltExe find_built_exe(const char* var) {
  const char* v = std::getenv(var);
  if (v == nullptr || *v == '\0') return {{}, std::string(var) + " is not set (run through ctest)", {}};
  struct stat st {};
  if (::stat(v, &st) != 0 || !S_ISREG(st.st_mode) || ::access(v, X_OK) != 0)
    return {{}, {}, std::string(var) + "=" + v + " is not an executable file (a broken build or a wrong path)"};
  return {v, {}, {}};
}

/// The path in `var`, or "" after the case was skipped (tests/skip.hpp; the caller returns). A
/// variable that names no executable fails the case here (doctest's FAIL ends it).
inline std::string built_exe_or_skip(const char* var) {
  BuiltExe e = find_built_exe(var);
  if (!e.error.empty()) FAIL(e.error);
  if (!e.skip.empty()) skip_case(e.skip);
  return e.path;
}

/// atlas-bench (ATLAS_BENCH_EXE) and atlas-serve (ATLAS_SERVE_EXE), as built_exe_or_skip.
inline std::string bench_exe_or_skip() { return built_exe_or_skip("ATLAS_BENCH_EXE"); }
inline std::string serve_exe_or_skip() { return built_exe_or_skip("ATLAS_SERVE_EXE"); }

}  // namespace atlas::test
