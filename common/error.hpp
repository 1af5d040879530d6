#pragma once
// Typed errors: every layer throws its own subclass of atlas::Error, and the message names the
// file, the field and the bad value. Commands exit 3 on an atlas::Error and 4 on a MachineError
// (common/machine_error.hpp: the machine or the program failed), through one mapping
// (common/exit_code.hpp).
#include <stdexcept>
#include <string>

namespace atlas {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Malformed or missing input (a file that does not parse, a bad option value).
class InputError : public Error {
 public:
  using Error::Error;
};

}  // namespace atlas
