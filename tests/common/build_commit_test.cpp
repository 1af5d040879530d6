// The build's commit: compiled in (cmake/build_commit.cmake), printed by `atlas-bench --version`
// and read back by the gate from a --base-bin binary (common/build_commit.hpp).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/build_commit.hpp"
#include "common/process.hpp"
#include "tests/built_exe.hpp"
#include "tests/skip.hpp"

using namespace atlas;

TEST_CASE("build commit: the --version line is parsed back, and nothing else passes for it") {
  const std::string sha = "0123456789abcdef0123456789abcdef01234567";
  const auto clean = parse_build_commit("atlas-bench 0.1.0 (commit " + sha + ", clean tree)\n");
  REQUIRE(clean);
  CHECK(clean->commit == sha);
  CHECK_FALSE(clean->dirty);
  const auto dirty = parse_build_commit("atlas-bench 0.1.0 (commit " + sha + ", dirty tree)");
  REQUIRE(dirty);
  CHECK(dirty->dirty);
  CHECK_FALSE(parse_build_commit("atlas-bench 0.1.0"));                            // an older build
  CHECK_FALSE(parse_build_commit("atlas-bench 0.1.0 (commit unknown)"));           // a tarball build
  CHECK_FALSE(parse_build_commit("commit " + sha.substr(0, 39) + ", clean tree"));  // too short
  CHECK_FALSE(parse_build_commit("commit " + sha + "0, clean tree"));              // too long
  CHECK_FALSE(parse_build_commit("commit 0123456789ABCDEF0123456789abcdef01234567, clean tree"));
  CHECK_FALSE(parse_build_commit("commit " + sha));                                // no tree state
}

TEST_CASE("build commit: atlas-bench --version says the commit this build was made from") {
  const std::string exe = atlas::test::bench_exe_or_skip();
  if (exe.empty()) return;
  const auto r = run_process({exe, "--version"}, {});
  REQUIRE(r.exit_status == 0);
  // The same library compiled into both: the test binary and atlas-bench say the same.
  CHECK(r.out == "atlas-bench 0.1.0 (" + build_commit_text() + ")\n");
  if (std::string(build_commit()) != "unknown") {
    const auto back = parse_build_commit(r.out);
    REQUIRE(back);
    CHECK(back->commit == build_commit());
    CHECK(back->dirty == build_tree_dirty());
  }
}
