#pragma once
// The gates layer's error type. A malformed BASELINE file, gate config or option value throws a
// GateError whose message names the file, the JSON path of the field and the bad value; the CLI
// maps it (like every atlas::InputError) to exit code 3.
#include <string>

#include "common/error.hpp"

namespace atlas::gates {

class GateError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace atlas::gates
