#pragma once
// Template source -> statement tree (the parser of the Jinja subset chat_template.hpp lists).
#include <string>
#include <vector>

#include "chat/jinja_ast.hpp"

namespace atlas::chat::jinja {

/// Parses a whole template. As jinja2 by default (keep_trailing_newline=False), one trailing
/// newline of the source is dropped. Throws TemplateError "chat template line L: ..." naming an
/// unsupported construct or a syntax error.
std::vector<Node> parse_template(std::string source);

}  // namespace atlas::chat::jinja
