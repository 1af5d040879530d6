#pragma once
// How deeply JSON text nests arrays and objects, found by one pass over the bytes before any
// parser sees them. nlohmann::json parses iteratively but dump() and comparisons recurse once per
// level, so a 100,000-deep body ("[[[[...") overflows the stack of whatever prints it: one
// request could kill atlas-serve, one streamed event the benchmark client. Readers of outside
// JSON reject text deeper than a limit first.
#include <cstddef>
#include <string_view>

namespace atlas {

/// Deepest nesting level of `[`/`{` in `text` (0 for a scalar), ignoring brackets inside
/// strings (with backslash escapes). Scanning stops as soon as the depth exceeds `stop_after`,
/// returning stop_after + 1, so a caller checking a limit pays only for the prefix it needs.
/// Malformed text is not diagnosed (the parser does that); unbalanced closers never go below 0.
std::size_t json_nesting_depth(std::string_view text, std::size_t stop_after = static_cast<std::size_t>(-1) - 1);

/// The depth accepted from outside input: far above any real request, tool schema or record
/// (a few tens of levels), far below what overflows an 8 MiB thread stack.
inline constexpr std::size_t kMaxJsonNesting = 256;

}  // namespace atlas
