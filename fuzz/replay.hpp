#pragma once
// The harness table of the replay driver (fuzz/replay_main.cpp).
#include <map>
#include <string>

#include "fuzz/fuzz_target.hpp"

namespace atlas::fuzz {
/// Every harness compiled into this executable, by name.
std::map<std::string, Harness>& harnesses();
}  // namespace atlas::fuzz
