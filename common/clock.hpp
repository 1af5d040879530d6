#pragma once
#include <chrono>
#include <cstdint>

namespace atlas {
/// Monotonic timestamp in nanoseconds (steady_clock); only differences are meaningful.
inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace atlas
