#pragma once
#include "common/error.hpp"

namespace atlas::engine {
/// Errors of the engine layer: a bad model file (names file, field, value), a context overflow,
/// an unsupported architecture.
class EngineError : public atlas::InputError {
 public:
  using atlas::InputError::InputError;
};
}  // namespace atlas::engine
