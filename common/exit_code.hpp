#pragma once
// Exit codes shared by every atlas-bench command (documented in README.md).
namespace atlas {
enum class ExitCode : int {
  pass = 0,          ///< everything within baseline
  regression = 1,    ///< at least one metric regressed
  inconclusive = 2,  ///< box not quiet, too few samples, significance undecided
  input_error = 3,   ///< usage or input error
};
inline int to_int(ExitCode c) { return static_cast<int>(c); }
}  // namespace atlas
