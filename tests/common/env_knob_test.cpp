#include <doctest/doctest.h>

#include <stdlib.h>

#include <string>

#include "common/env_flag.hpp"
#include "common/error.hpp"

namespace {
/// Sets an environment variable for one scope, restoring "unset" after it.
struct ScopedEnv {
  const char* name;
  ScopedEnv(const char* n, const char* v) : name(n) { ::setenv(n, v, 1); }
  ~ScopedEnv() { ::unsetenv(name); }
};
constexpr const char* kVar = "ATLAS_TEST_ENV_KNOB";
}  // namespace

TEST_CASE("env_flag: the boolean spellings, and an InputError for anything else") {
  ::unsetenv(kVar);
  CHECK_FALSE(atlas::env_flag(kVar));
  for (const char* off : {"", "0", "false", "no", "off"}) {
    ScopedEnv e(kVar, off);
    CHECK_FALSE(atlas::env_flag(kVar));
  }
  for (const char* on : {"1", "true", "yes", "on"}) {
    ScopedEnv e(kVar, on);
    CHECK(atlas::env_flag(kVar));
  }
  ScopedEnv e(kVar, "ture");
  CHECK_THROWS_WITH_AS(atlas::env_flag(kVar), doctest::Contains("ATLAS_TEST_ENV_KNOB = 'ture'"), atlas::InputError);
}

TEST_CASE("env_choice: a listed value, empty when unset, an InputError naming the choices otherwise") {
  ::unsetenv(kVar);
  CHECK(atlas::env_choice(kVar, {"split", "cluster"}).empty());
  {
    ScopedEnv e(kVar, "");
    CHECK(atlas::env_choice(kVar, {"split", "cluster"}).empty());
  }
  {
    ScopedEnv e(kVar, "cluster");
    CHECK(atlas::env_choice(kVar, {"split", "cluster"}) == "cluster");
  }
  // A typo used to run the default silently (e.g. ATLAS_GEMV_KERNEL=reg measured the ring kernel).
  ScopedEnv e(kVar, "splt");
  CHECK_THROWS_WITH_AS(atlas::env_choice(kVar, {"split", "cluster"}),
                       doctest::Contains("ATLAS_TEST_ENV_KNOB = 'splt' is not one of: split, cluster"), atlas::InputError);
}

TEST_CASE("env_int: a whole number in range, the fallback when unset, an InputError naming value and range") {
  ::unsetenv(kVar);
  CHECK(atlas::env_int(kVar, 1, 64, -1) == -1);
  {
    ScopedEnv e(kVar, "");
    CHECK(atlas::env_int(kVar, 1, 64, 7) == 7);
  }
  {
    ScopedEnv e(kVar, "64");
    CHECK(atlas::env_int(kVar, 1, 64, 7) == 64);
  }
  // atoi read "32x" as 32, "x" as 0 (then the default), and "-3" as -3.
  for (const char* bad : {"32x", "x", "-3", "65", " 5", "99999999999999999999"}) {
    ScopedEnv e(kVar, bad);
    const std::string want = std::string("ATLAS_TEST_ENV_KNOB = '") + bad + "' is not a whole number in 1..64";
    CHECK_THROWS_WITH_AS(atlas::env_int(kVar, 1, 64, 7), doctest::Contains(want.c_str()), atlas::InputError);
  }
}
