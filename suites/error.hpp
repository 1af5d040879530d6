#pragma once
#include "common/error.hpp"

namespace atlas::suites {
/// Errors of the suites layer: a malformed suite config or agentic trace (the message names the
/// file, the field and the bad value), a target request that failed, an unknown suite name.
class SuiteError : public atlas::InputError {
 public:
  using atlas::InputError::InputError;
};
}  // namespace atlas::suites
