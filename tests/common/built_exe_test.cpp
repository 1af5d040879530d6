// The one lookup of the binaries a test runs (tests/built_exe.hpp): unset is a run outside ctest
// (Skipped), a path that is no executable is a broken build (a failure, never Skipped).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

#include "common/atomic_file.hpp"
#include "tests/built_exe.hpp"
#include "tests/test_data.hpp"

namespace {

constexpr const char* kVar = "ATLAS_TEST_BUILT_EXE";

struct EnvVar {  // sets kVar for one check and removes it afterwards
  explicit EnvVar(const std::string& value) { ::setenv(kVar, value.c_str(), 1); }
  ~EnvVar() { ::unsetenv(kVar); }
};

}  // namespace

TEST_CASE("built exe: unset or empty is a skip with the reason, never an error") {
  ::unsetenv(kVar);
  auto e = atlas::test::find_built_exe(kVar);
  CHECK(e.path.empty());
  CHECK(e.error.empty());
  CHECK(e.skip == std::string(kVar) + " is not set (run through ctest)");
  EnvVar empty("");
  e = atlas::test::find_built_exe(kVar);
  CHECK(e.error.empty());
  CHECK_FALSE(e.skip.empty());
}

TEST_CASE("built exe: a path that is not an executable file fails the case, naming the variable and the path") {
  const auto dir = atlas::test::scratch_dir("built_exe");
  const auto missing = dir / "no-such-atlas-bench";
  const auto plain = dir / "not-executable";
  atlas::write_file_atomic(plain, "#!/bin/sh\n");
  std::filesystem::permissions(plain, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  for (const auto& p : {missing, plain, dir}) {
    EnvVar v(p.string());
    const auto e = atlas::test::find_built_exe(kVar);
    CHECK(e.path.empty());
    CHECK(e.skip.empty());
    CHECK(e.error == std::string(kVar) + "=" + p.string() + " is not an executable file (a broken build or a wrong path)");
  }
}

TEST_CASE("built exe: an executable file is the path to run") {
  const auto dir = atlas::test::scratch_dir("built_exe_ok");
  const auto exe = dir / "tool";
  atlas::write_file_atomic(exe, "#!/bin/sh\nexit 0\n");
  std::filesystem::permissions(exe, std::filesystem::perms::owner_all);
  EnvVar v(exe.string());
  const auto e = atlas::test::find_built_exe(kVar);
  CHECK(e.path == exe.string());
  CHECK(e.skip.empty());
  CHECK(e.error.empty());
}
