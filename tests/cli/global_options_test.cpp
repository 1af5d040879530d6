// The command line reads as one tool: global options (--data-dir) are accepted before or after
// the subcommand, in every command and nested command, and every suite honours --data-dir.
// Runs the real executable (ctest sets ATLAS_BENCH_EXE).
#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "common/atomic_file.hpp"
#include "gates/process.hpp"
#include "records/record_io.hpp"
#include "tests/cli/cli_util.hpp"
#include "tests/records/fixture.hpp"
#include "tests/test_data.hpp"

using namespace atlas;

TEST_CASE("diff accepts the global --data-dir after the subcommand and prints the same") {
  const auto run = test::cli_runner("cli_global_diff");
  if (!run) return;
  const auto rec = records::record_text(test::sample_record());
  write_file_atomic(run->cwd / "a.json", rec);
  write_file_atomic(run->cwd / "b.json", rec);
  const auto before = (*run)({"--data-dir", "somewhere", "diff", "a.json", "b.json"});
  const auto after = (*run)({"diff", "a.json", "b.json", "--data-dir", "somewhere"});
  INFO(after.err);
  REQUIRE(before.exit_status == 0);
  CHECK(after.exit_status == 0);
  CHECK(after.out == before.out);
  CHECK(after.err.find("not expected") == std::string::npos);
}

TEST_CASE("a nested command (baseline show) accepts the global --data-dir after it") {
  const auto run = test::cli_runner("cli_global_baseline");
  if (!run) return;
  const std::vector<std::string> tail = {"--baselines-dir", "b", "--machine-class", "cpu-test"};
  auto args = [&](std::vector<std::string> head) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  const auto before = (*run)(args({"--data-dir", "d", "baseline", "show"}));
  const auto after = (*run)(args({"baseline", "show", "--data-dir", "d"}));
  INFO(after.err);
  CHECK(after.exit_status == before.exit_status);
  CHECK(after.out == before.out);
  CHECK(after.err.find("not expected") == std::string::npos);
}

TEST_CASE("run --suite bfcl reads the data directory given after the subcommand") {
  const auto run = test::cli_runner("cli_global_bfcl");
  if (!run) return;
  test::require_data(test::stories_bin());
  // An empty data directory: the BFCL suite must look for its files there (not in
  // $ATLAS_DATA_DIR, which ctest sets to the real data) and say so before running anything.
  const auto empty = run->cwd / "empty-data";
  std::filesystem::create_directories(empty);
  const auto r = (*run)({"run", "--suite", "bfcl", "--model", test::stories_bin().string(), "--no-store",
                         "--data-dir", empty.string()});
  INFO(r.err);
  CHECK(r.exit_status == 3);
  CHECK(r.err.find("not expected") == std::string::npos);
  CHECK(r.err.find((empty / "bfcl").string()) != std::string::npos);
  CHECK(r.out.find("bfcl") == std::string::npos);  // no table: nothing ran
}

TEST_CASE("every command's help names the global options it accepts") {
  const auto run = test::cli_runner("cli_global_help");
  if (!run) return;
  for (const char* cmd : {"run", "diff", "ab", "generate"}) {
    const auto r = (*run)({cmd, "--help"});
    CAPTURE(cmd);
    CHECK(r.exit_status == 0);
    CHECK(r.out.find("Global options, here or before the command name: --data-dir DIR") != std::string::npos);
  }
}

TEST_CASE("a command's or nested command's help has its own footer, not the top-level page's") {
  const auto run = test::cli_runner("cli_global_help_footer");
  if (!run) return;
  const std::vector<std::vector<std::string>> pages = {
      {"run", "--help"}, {"diff", "--help"}, {"baseline", "show", "--help"}, {"baseline", "ratchet", "--help"},
      {"records", "list", "--help"}};
  for (const auto& page : pages) {
    const auto r = (*run)(page);
    CAPTURE(page.front());
    CAPTURE(page.size() > 2 ? page[1] : std::string());
    CHECK(r.exit_status == 0);
    CHECK(r.out.find("Global options, here or before the command name: --data-dir DIR") != std::string::npos);
    // The top-level footer explains --pull-request-gate-check; it belongs on `atlas-bench --help` only.
    CHECK(r.out.find("--pull-request-gate-check") == std::string::npos);
    CHECK(r.out.find("Global options may also follow the command name") == std::string::npos);
  }
  const auto top = (*run)({"--help"});
  CHECK(top.out.find("--pull-request-gate-check") != std::string::npos);
}

TEST_CASE("data dir prints the data directory commands use, absolute") {
  const auto run = test::cli_runner("cli_data_dir");
  if (!run) return;
  // --data-dir first, before or after the command name; a relative one made absolute.
  for (const auto& args : std::vector<std::vector<std::string>>{{"--data-dir", "rel/../d", "data", "dir"},
                                                                 {"data", "dir", "--data-dir", "rel/../d"}}) {
    const auto r = (*run)(args);
    INFO(r.err);
    CHECK(r.exit_status == 0);
    CHECK(r.out == (run->cwd / "d").string() + "\n");
  }
  // Else the order of common/data_dir.hpp: here $ATLAS_DATA_DIR, which ctest sets (the order's
  // other cases: tests/common/data_dir_test.cpp).
  const char* env = std::getenv("ATLAS_DATA_DIR");
  REQUIRE(env != nullptr);
  REQUIRE(*env != '\0');
  const auto r = (*run)({"data", "dir"});
  CHECK(r.exit_status == 0);
  CHECK(r.out == std::filesystem::absolute(env).lexically_normal().string() + "\n");
}
