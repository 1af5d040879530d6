#pragma once
// Renders a parsed template (jinja_parser.hpp) against a context: scopes, `loop`, `set` and
// namespaces, expressions, tests, function and method calls; filters in jinja_filters.hpp.
#include <string>
#include <vector>

#include "chat/jinja_ast.hpp"

namespace atlas::chat::jinja {

/// Thrown by the template's raise_exception(message) call.
struct RaiseException {
  std::string message;
};

/// The text `nodes` render to with the variables of `context` (an object; anything else is an
/// empty context). Throws RaiseException for raise_exception(), TemplateError naming the line
/// for a type error (a comparison of a string with a number, a call of an unknown function).
std::string render_nodes(const std::vector<Node>& nodes, const V& context);

}  // namespace atlas::chat::jinja
