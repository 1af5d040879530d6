// Run from outside a checkout (no baselines/ there), the gate says at the start that it found
// no baseline and why, instead of running every suite first and saying so at the end.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "tests/cli/cli_util.hpp"

TEST_CASE("gate outside a checkout: 'no baseline ... not inside a git checkout' before anything runs") {
  const auto run = atlas::test::cli_runner("cli_gate_start");
  if (!run) return;
  // A directory outside every git checkout (the build tree is inside one).
  const auto outside = std::filesystem::temp_directory_path() /
                       ("atlas-cli-gate-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::filesystem::create_directories(outside);
  atlas::test::CliRunner here{run->exe, outside};
  // A model that does not exist stops the gate right after its start-up checks, so the test
  // does not run the suites; the baseline message must already be out by then.
  const auto r = here({"gate", "--machine-class", "cpu-test", "--model", (outside / "missing.bin").string()});
  std::filesystem::remove_all(outside);
  INFO(r.err);
  CHECK(r.exit_status == 3);
  const auto no_baseline = r.err.find("atlas-bench: no baseline baselines/cpu-test/pr.BASELINE.json for machine class cpu-test");
  REQUIRE(no_baseline != std::string::npos);
  CHECK(r.err.find("is not inside a git checkout") != std::string::npos);
  CHECK(no_baseline < r.err.find("missing.bin"));
}
