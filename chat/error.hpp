#pragma once
#include "common/error.hpp"

namespace atlas::chat {
/// A chat template that does not parse or cannot render: names the line and the construct
/// ("chat template line L: ..."). An input error (exit 3): the template came from a model file,
/// a --chat-template file or a request's messages; the server answers a render error with 400.
class TemplateError : public atlas::InputError {
 public:
  using atlas::InputError::InputError;
};
}  // namespace atlas::chat
