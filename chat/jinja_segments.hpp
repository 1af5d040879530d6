#pragma once
// Template text -> segments: text, {{ expr }}, {% stmt %} and {# comment #}, with jinja2's
// whitespace control applied as transformers configures it (trim_blocks and lstrip_blocks,
// `-` strips, `+` keeps).
#include <string>
#include <vector>

namespace atlas::chat::jinja {

struct Segment {
  enum Kind { text, expr, stmt, comment } kind = text;
  std::string body;
  int line = 1;
  bool strip_left = false;   // {%- {{- {#-
  bool strip_right = false;  // -%} -}} -#}
  bool keep_left = false;    // {%+ (disables lstrip_blocks)
};

/// Splits `src`; throws TemplateError (fail()) on an unterminated tag.
std::vector<Segment> split_template(const std::string& src);

}  // namespace atlas::chat::jinja
