#pragma once
// Text from records and reports (metric names, reasons, file names) as it goes into the
// markdown a CI job posts on a pull request. A metric named "[x](https://evil)", "@org/team" or
// "<img src=...>" would otherwise become a link, a mention that notifies people, or HTML in the
// PR comment: the names come from records and suite configs a PR author controls. One escaper for
// every markdown printer, so none is forgotten.
#include <string>
#include <string_view>

namespace atlas {

/// `s` as plain text in a table cell or a list item: '<', '>', '[', ']' and '`' become
/// entities (no HTML, link, image or code span), '@' cannot mention, "://" and "www." cannot
/// autolink, '|' cannot end the cell, newlines become spaces.
std::string md_text(std::string_view s);

/// `s` as an inline code span (backticks included): code spans show their content literally, so
/// only the delimiters need care: the fence is longer than any run of backticks in `s`, and '|'
/// is escaped (GitHub's tables split rows on it even inside code), newlines become spaces.
std::string md_code(std::string_view s);

}  // namespace atlas
