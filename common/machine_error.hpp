#pragma once
// A failure of the machine or of the program, not of what the user gave: a CUDA fault, no
// usable device, an allocation the machine cannot serve, a system call that failed, a broken
// invariant. Commands exit 4 on it (common/exit_code.hpp), so a CI job can tell "fix your input"
// (3) from "this box or this build is broken" (4). The message names the call and its value.
#include <cstring>
#include <string>
#include <system_error>

#include "common/error.hpp"

namespace atlas {

class MachineError : public Error {
 public:
  using Error::Error;
};

/// Whether a failed system call's errno says the machine failed (EIO, ENOSPC, EDQUOT, EFBIG,
/// EMFILE, ENFILE, ENOMEM, ...) rather than that the path the user named is wrong (ENOENT,
/// ENOTDIR, EISDIR, EACCES, EPERM, EROFS, EEXIST, ENAMETOOLONG, ELOOP: an input error). An errno
/// not in the second list counts as the machine's.
bool errno_is_machine_failure(int err) noexcept;

/// Throws "<what>: <strerror(err)>" as a MachineError when errno_is_machine_failure(err), else as
/// `InputErrorT` (InputError or a layer's subclass of it, e.g. EngineError), so that a file
/// write that fails with ENOSPC exits 4 and one into a folder that does not exist exits 3.
template <class InputErrorT = InputError>
[[noreturn]] void throw_errno_error(const std::string& what, int err) {
  std::string message = what + ": " + std::strerror(err);
  if (errno_is_machine_failure(err)) throw MachineError(std::move(message));
  throw InputErrorT(std::move(message));
}

/// As throw_errno_error, for a std::filesystem call's error code (its value is the errno).
template <class InputErrorT = InputError>
[[noreturn]] void throw_errno_error(const std::string& what, const std::error_code& ec) {
  std::string message = what + ": " + ec.message();
  const bool is_errno = ec.category() == std::generic_category() || ec.category() == std::system_category();
  if (!is_errno || errno_is_machine_failure(ec.value())) throw MachineError(std::move(message));
  throw InputErrorT(std::move(message));
}

}  // namespace atlas
