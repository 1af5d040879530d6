#pragma once
// The BFCL subset's error type: malformed data or results files. Derives from InputError so the
// CLI maps it to exit code 3; messages name the file, the line and the bad field.
#include "common/error.hpp"

namespace atlas::suites::bfcl {

class BfclError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace atlas::suites::bfcl
