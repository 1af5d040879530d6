#pragma once
// Boolean environment variables (ATLAS_NO_PDL, ATLAS_NO_DECODE_GRAPHS, ...: docs/environment.md)
// have one meaning everywhere. Header-only and C++17, because the CUDA kernels (nvcc -std=c++17)
// read them too.
#include <cstdlib>
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

}  // namespace atlas
