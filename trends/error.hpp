#pragma once
// The trends layer's error type: a bad report option or an output folder that cannot be
// written. A record that does not parse is not an error here: the report names it and goes on.
#include <string>

#include "common/error.hpp"

namespace atlas::trends {

class TrendError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace atlas::trends
