// The main of every test binary: doctest, plus the skip protocol of tests/skip.hpp.
//
// --atlas-one-case (what ctest passes, with --test-case=NAME: tests/CMakeLists.txt) runs one
// test case per process: a skip ends the process with kSkipExitCode, and a filter that matches
// no case or several is an error rather than a pass (doctest's --test-case is a case-insensitive
// wildcard, so a name could match more than itself).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tests/skip.hpp"

namespace {

struct SkipState {
  bool one_case = false;
  int cases_started = 0;
  std::string current;                                      ///< the running test case's name
  std::vector<std::pair<std::string, std::string>> skipped;  ///< (case, reason)
};

SkipState& state() {
  static SkipState s;
  return s;
}

/// A doctest listener that only follows which test case runs (main's checks need it).
struct CaseTracker : doctest::IReporter {
  explicit CaseTracker(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData& d) override {
    ++state().cases_started;
    state().current = d.m_name;
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

DOCTEST_REGISTER_LISTENER("atlas_case_tracker", 1, CaseTracker);

namespace atlas::test {

void skip_case(const std::string& reason) {
  std::fprintf(stderr, "skipped: %s\n", reason.c_str());
  if (state().one_case) {
    std::fflush(stdout);
    std::fflush(stderr);
    // _Exit, not exit: the case may hold threads or children whose static destruction would
    // race; nothing else is left to write.
    std::_Exit(kSkipExitCode);
  }
  state().skipped.emplace_back(state().current, reason);
}

}  // namespace atlas::test

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--atlas-one-case") == 0) state().one_case = true;
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (context.shouldExit()) return rc;  // --list-test-cases, --help and the like
  if (state().one_case && state().cases_started != 1) {
    std::fprintf(stderr, "--atlas-one-case: the filter matched %d test cases, want exactly 1\n", state().cases_started);
    return 1;
  }
  if (!state().skipped.empty()) {
    std::fprintf(stderr, "%zu test case(s) skipped:\n", state().skipped.size());
    for (const auto& [name, why] : state().skipped) std::fprintf(stderr, "  %s: %s\n", name.c_str(), why.c_str());
    if (rc == 0) return atlas::test::kSkipExitCode;
  }
  return rc;
}
