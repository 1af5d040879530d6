#pragma once
// Environment knobs (ATLAS_NO_PDL, ATLAS_GEMV_KSPLIT, ...: docs/environment.md) are read one way
// everywhere: a boolean has one set of spellings, and a value outside a knob's choices or range
// is an InputError naming the variable and the value, never a silent fall back to the default (a
// typo in an A/B run would otherwise measure the default twice). Header-only and C++17, because
// the CUDA kernels (nvcc -std=c++17) read them too.
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <initializer_list>
#include <string>

#include "common/error.hpp"

namespace atlas {

/// Whether `name` is on. Unset or empty: off. "0", "false", "no", "off": off. "1", "true",
/// "yes", "on": on. Anything else is an InputError naming the variable and its value, rather
/// than a guess (a typo like ATLAS_NO_PDL=ture must not silently mean either).
inline bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return false;
  const std::string s(v);
  if (s == "0" || s == "false" || s == "no" || s == "off") return false;
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  throw InputError(std::string("environment variable ") + name + " = '" + s +
                   "' is not a boolean (1/true/yes/on or 0/false/no/off)");
}

/// Whether the process runs under CI (the `CI` variable, which CI systems set: GitHub Actions and
/// GitLab `true`, AppVeyor `True`, others their own name). Not one of our knobs, so read leniently
/// and never an error: unset, empty, or 0 / false / no / off in any letter case is off; any other
/// value is on. tools/lib/ci_flag.sh reads it the same way (the build's warnings
/// as errors); the ctest common/"ci_env" checks they agree.
inline bool ci_env() {
  const char* v = std::getenv("CI");
  if (v == nullptr || *v == '\0') return false;
  std::string s(v);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return !(s == "0" || s == "false" || s == "no" || s == "off");
}

/// The value of `name` when it is one of `choices`; "" when unset or empty (the caller's
/// default). Anything else is an InputError listing the choices.
inline std::string env_choice(const char* name, std::initializer_list<const char*> choices) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return {};
  std::string list;
  for (const char* c : choices) {
    if (std::string(v) == c) return v;
    list += (list.empty() ? "" : ", ") + std::string(c);
  }
  throw InputError(std::string("environment variable ") + name + " = '" + v + "' is not one of: " + list);
}

/// The integer value of `name` in [lo, hi]; `fallback` when unset or empty. A value that is not
/// a whole decimal number in range is an InputError naming the variable, the value and the range.
inline int env_int(const char* name, int lo, int hi, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v, &end, 10);
  const bool digits_first = std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '-';  // strtol skips spaces
  if (!digits_first || end == v || *end != '\0' || errno == ERANGE || n < lo || n > hi)
    throw InputError(std::string("environment variable ") + name + " = '" + v + "' is not a whole number in " +
                     std::to_string(lo) + ".." + std::to_string(hi));
  return static_cast<int>(n);
}

}  // namespace atlas
