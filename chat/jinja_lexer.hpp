#pragma once
// Tokens of a template expression (the inside of {{ }} or of a {% %} statement).
#include <string>
#include <vector>

namespace atlas::chat::jinja {

struct Tok {
  enum Kind { name, str, integer, real, op, end } kind = end;
  std::string text;
  long long ival = 0;
  double fval = 0;
};

/// Tokenizes `s` (names, string/integer/float literals, operators), ending with Tok::end.
/// Throws TemplateError naming `line` on a character no expression may hold.
std::vector<Tok> lex_expr(const std::string& s, int line);

}  // namespace atlas::chat::jinja
