// A boolean environment variable has one meaning everywhere: atlas::env_flag (C++: the ATLAS_*
// flags, the suites' progress reading CI) and tools/lib/env_flag.sh (the Makefile and CMake
// reading CI for warnings as errors) accept the same spellings and reject the same typos.
#include "common/env_flag.hpp"

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <optional>
#include <string>

#include "common/build_paths.hpp"
#include "common/process.hpp"

namespace {

constexpr const char* kVar = "ATLAS_ENV_FLAG_TEST";  // read by this test alone

// env_flag(kVar) with the value set: true/false, or nullopt when it throws.
std::optional<bool> cxx_flag(const std::string& value) {
  ::setenv(kVar, value.c_str(), 1);
  std::optional<bool> r;
  try {
    r = atlas::env_flag(kVar);
  } catch (const atlas::InputError&) {
  }
  ::unsetenv(kVar);
  return r;
}

// tools/lib/env_flag.sh's answer for the same value.
std::optional<bool> shell_flag(const std::string& value) {
  atlas::ProcessOptions o;
  o.env_overrides[kVar] = value;  // empty: unset, which env_flag reads as empty does
  const auto script = std::filesystem::path(atlas::build_source_dir()) / "tools" / "lib" / "env_flag.sh";
  const auto r = atlas::run_process_with({"bash", script.string(), kVar}, o);
  if (r.exit_status == 3) {
    CHECK(r.err.find(std::string(kVar) + " = '" + value + "' is not a boolean") != std::string::npos);
    return std::nullopt;
  }
  REQUIRE(r.exit_status == 0);
  REQUIRE((r.out == "1\n" || r.out == "0\n"));
  return r.out == "1\n";
}

}  // namespace

TEST_CASE("env_flag and tools/lib/env_flag.sh read every spelling the same") {
  struct Case {
    const char* value;
    std::optional<bool> want;
  };
  const Case cases[] = {{"", false},       {"0", false},       {"false", false},   {"no", false},
                        {"off", false},    {"1", true},        {"true", true},     {"yes", true},
                        {"on", true},      {"ture", std::nullopt}, {"FALSE", std::nullopt}, {"True", std::nullopt},
                        {"2", std::nullopt}, {" true", std::nullopt}};
  for (const auto& c : cases) {
    CAPTURE(c.value);
    CHECK(cxx_flag(c.value) == c.want);
    CHECK(shell_flag(c.value) == c.want);
  }
}

TEST_CASE("ci_env and tools/lib/env_flag.sh CI read the CI system's variable the same, leniently") {
  // CI is set by the CI system, not by us: never an error (a gate under AppVeyor's CI=True used
  // to stop with exit 3), any case of an off spelling is off, anything else on.
  struct Case {
    const char* value;
    bool want;
  };
  const Case cases[] = {{"", false},    {"0", false},    {"false", false}, {"FALSE", false}, {"No", false},
                        {"off", false}, {"1", true},     {"true", true},   {"True", true},   {"yes", true},
                        {"drone", true}, {"ture", true}};
  const auto script = std::filesystem::path(atlas::build_source_dir()) / "tools" / "lib" / "env_flag.sh";
  for (const auto& c : cases) {
    CAPTURE(c.value);
    ::setenv("CI", c.value, 1);
    CHECK(atlas::ci_env() == c.want);
    atlas::ProcessOptions o;
    o.env_overrides["CI"] = c.value;
    const auto r = atlas::run_process_with({"bash", script.string(), "CI"}, o);
    CHECK(r.exit_status == 0);
    CHECK(r.out == (c.want ? "1\n" : "0\n"));
  }
  ::unsetenv("CI");
  CHECK_FALSE(atlas::ci_env());
}
