#pragma once
// Filters: `value | name(args)` of the Jinja subset chat_template.hpp lists, with jinja2's
// semantics (and Python's for the string operations they wrap).
#include <cstddef>
#include <functional>
#include <string>

#include "chat/jinja_value.hpp"

namespace atlas::chat::jinja {

/// A filter's argument by keyword `name`, else by position `pos` (0 = the first after the
/// value), else `dflt`; evaluated only when asked for.
using FilterArg = std::function<V(const std::string& name, std::size_t pos, V dflt)>;

/// Applies filter `name` to `v`. Throws TemplateError naming `line` for an unsupported filter
/// or a value it cannot take (length of a number).
V apply_filter(const std::string& name, const V& v, const FilterArg& arg, int line);

}  // namespace atlas::chat::jinja
