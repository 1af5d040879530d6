#pragma once
// Typed errors: every layer throws its own subclass of atlas::Error, and the message names the
// file, the field and the bad value. The CLI maps any atlas::Error to exit code 3.
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
