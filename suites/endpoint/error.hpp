#pragma once
#include "common/error.hpp"

namespace atlas::suites::endpoint {
/// Errors of the endpoint client that stop a run before it starts: a bad URL, an endpoint that
/// does not answer GET /models, a model it does not serve, a missing API-key variable. Failures
/// of single requests are not thrown: they are reported in TargetResponse.ok/error.
class EndpointError : public atlas::InputError {
 public:
  using atlas::InputError::InputError;
};
}  // namespace atlas::suites::endpoint
