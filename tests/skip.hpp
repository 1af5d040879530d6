#pragma once
// A test that cannot run says so: ATLAS_SKIP(reason) ends the test case as Skipped, never as a
// pass that checked nothing.
//
// ctest runs each test case in its own process (tests/CMakeLists.txt, --atlas-one-case): there
// a skip prints "skipped: <reason>" on stderr and ends the process with kSkipExitCode, which
// ctest's SKIP_RETURN_CODE reports as Skipped. Run by hand over many cases, a binary records the
// skip and goes on with the next case, so one missing tool does not hide the rest; tests/main.cpp
// lists the skipped cases with their reasons at the end and exits kSkipExitCode when nothing
// failed but something was skipped.
//
// Skip only for what a machine may lack without being broken (a GPU, valgrind, node, a Linux
// kernel feature, a sanitizer-free build, a run outside ctest). An input the README says the
// tests need (the data directory) is required: its absence fails (tests/test_data.hpp), as does
// a binary ctest names that is not there (tests/built_exe.hpp).
#include <doctest/doctest.h>

#include <sstream>
#include <string>

namespace atlas::test {

/// The exit code of a skipped test case: 77, automake's and ctest's usual "skipped".
inline constexpr int kSkipExitCode = 77;

/// Prints the reason and, in one-case mode, ends the process with kSkipExitCode; otherwise
/// records the skip for main's summary and returns (the caller then returns from the test).
void skip_case(const std::string& reason);

}  // namespace atlas::test

/// Skips the current test case: `ATLAS_SKIP("valgrind is not installed");` The argument is
/// streamed, so `ATLAS_SKIP(path << " is not a git checkout")` works. Use in the test case's own
/// body (it returns from it); helpers call atlas::test::skip_case and tell their caller.
#define ATLAS_SKIP(reason)                              \
  do {                                                  \
    std::ostringstream atlas_skip_why_;                 \
    atlas_skip_why_ << reason;                          \
    ::atlas::test::skip_case(atlas_skip_why_.str());    \
    return;                                             \
  } while (0)
