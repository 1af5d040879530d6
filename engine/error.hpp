#pragma once
#include "common/error.hpp"

namespace atlas::engine {
/// Errors of the engine layer: a bad model file (names file, field, value), a context overflow,
/// an unsupported architecture.
class EngineError : public atlas::InputError {
 public:
  using atlas::InputError::InputError;
};

/// A generation stopped because its caller asked (GenerateRequest::cancelled: the client left,
/// the server's drain timeout passed). Not a failure: the session's cache stays consistent.
class GenerationCancelled : public atlas::Error {
 public:
  using atlas::Error::Error;
};
}  // namespace atlas::engine
