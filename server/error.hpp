#pragma once
#include "common/error.hpp"

namespace atlas::server {
/// Errors of the server layer that are not a client's fault and not an HTTP answer: a chat
/// template that does not parse (names the line and the construct), a bad server option.
class ServerError : public atlas::InputError {
 public:
  using atlas::InputError::InputError;
};
}  // namespace atlas::server
