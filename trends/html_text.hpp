#pragma once
// Text inside HTML and SVG: everything a record holds (commit names, metric names, a model
// path, a gate's reasons) is outside input, so it is escaped before it reaches a page.
#include <string>
#include <string_view>

namespace atlas::trends {

/// `text` with &, <, >, " and ' as character references (safe in text and quoted attributes).
std::string html_escape(std::string_view text);

/// A file name for `text`: letters, digits, '.', '_' and '-' kept, every other byte "_", and
/// fnv1a32 of the original appended when anything was replaced (so two names stay two files).
std::string file_stem(std::string_view text);

}  // namespace atlas::trends
