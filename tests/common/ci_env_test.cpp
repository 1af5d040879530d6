// The CI variable has one reading: atlas::ci_env (C++: the suites' progress, the tests) and
// tools/lib/ci_flag.sh (the Makefile and CMake, for warnings as errors) agree on every value.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "common/build_paths.hpp"
#include "common/env_flag.hpp"
#include "common/process.hpp"

TEST_CASE("ci_env and tools/lib/ci_flag.sh read the CI system's variable the same, leniently") {
  // CI is set by the CI system, not by us: never an error (a gate under AppVeyor's CI=True used
  // to stop with exit 3), any case of an off spelling is off, anything else on.
  struct Case {
    const char* value;
    bool want;
  };
  const Case cases[] = {{"", false},    {"0", false},    {"false", false}, {"FALSE", false}, {"No", false},
                        {"off", false}, {"1", true},     {"true", true},   {"True", true},   {"yes", true},
                        {"drone", true}, {"ture", true}};
  const auto script = std::filesystem::path(atlas::build_source_dir()) / "tools" / "lib" / "ci_flag.sh";
  for (const auto& c : cases) {
    CAPTURE(c.value);
    ::setenv("CI", c.value, 1);
    CHECK(atlas::ci_env() == c.want);
    atlas::ProcessOptions o;
    o.env_overrides["CI"] = c.value;
    const auto r = atlas::run_process_with({"bash", script.string()}, o);
    CHECK(r.exit_status == 0);
    CHECK(r.out == (c.want ? "1\n" : "0\n"));
  }
  ::unsetenv("CI");
  CHECK_FALSE(atlas::ci_env());
}
