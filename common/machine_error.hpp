#pragma once
// A failure of the machine or of the program, not of what the user gave: a CUDA fault, no
// usable device, an allocation the machine cannot serve, a system call that failed, a broken
// invariant. Commands exit 4 on it (common/exit_code.hpp), so a CI job can tell "fix your input"
// (3) from "this box or this build is broken" (4). The message names the call and its value.
#include "common/error.hpp"

namespace atlas {

class MachineError : public Error {
 public:
  using Error::Error;
};

}  // namespace atlas
