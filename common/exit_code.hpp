#pragma once
// Exit codes shared by every command (the table in README.md, "Exit codes").
#include <string_view>

namespace atlas {
enum class ExitCode : int {
  pass = 0,           ///< everything within baseline
  regression = 1,     ///< at least one metric regressed
  inconclusive = 2,   ///< box not quiet, too few samples, significance undecided
  input_error = 3,    ///< usage or input error: the message names the file, field and value
  machine_error = 4,  ///< the machine or the program failed (common/machine_error.hpp)
};
inline int to_int(ExitCode c) { return static_cast<int>(c); }

/// The exit code for the exception being handled, after printing it on stderr as
/// "<program>: error: ..." (3: an atlas::Error that is not a MachineError, i.e. a bad input) or
/// "<program>: machine error: ..." / "internal error: ..." / "out of memory: ..." (4: a
/// MachineError, std::bad_alloc, or any other exception, which only a bug lets escape). Call it
/// only inside a catch block: `catch (...) { return atlas::exit_code_of_current_exception("x"); }`.
int exit_code_of_current_exception(std::string_view program) noexcept;
}  // namespace atlas
