#pragma once
// Values of the chat-template renderer (chat_template.hpp) and their Python/jinja2 semantics:
// truthiness, str() and repr() text, json.dumps as transformers' tojson prints it, and the
// string helpers filters and methods share. `undefined` is a discarded JSON value: printed as
// "", falsy, and distinct from none.
#include <cstddef>
#include <string>

#include "chat/chat_template.hpp"

namespace atlas::chat::jinja {

using V = TemplateValue;

inline V undefined() { return V(V::value_t::discarded); }
inline bool is_undef(const V& v) { return v.is_discarded(); }

/// Throws TemplateError "chat template line <line>: <what>": every parse and render error.
[[noreturn]] void fail(int line, const std::string& what);

/// Python's truth value (undefined and none are false; empty strings and containers too).
bool truthy(const V& v);
/// json.dumps(v, ensure_ascii=False[, indent]) into `out`; indent < 0: one line.
void dump_python_json(const V& v, int indent, int depth, std::string& out);
/// str(v): strings as they are, None/True/False, floats with a ".0", containers as repr().
std::string to_text(const V& v);
/// repr(v): strings single-quoted with \\, \' and \n escaped; lists and dicts recursively.
std::string python_repr(const V& v);
/// Code points in UTF-8 text (Python's len of a str).
std::size_t utf8_length(const std::string& s);
/// Python's str.strip/lstrip/rstrip(chars).
std::string strip_chars(const std::string& s, const std::string& chars, bool left, bool right);
/// Python's str.replace(from, to): every occurrence; an empty `from` changes nothing. Throws
/// TemplateError when the result would exceed kMaxValueText (checked before building it).
std::string replace_all(const std::string& s, const std::string& from, const std::string& to);

/// Python int arithmetic on 64-bit ints: jinja2's ints are unbounded, ours are not, so a result
/// that does not fit (`9223372036854775807 * 2`, `-(-9223372036854775807 - 1)`) is a template
/// error naming the operation and the operands, never undefined behaviour. Throws as fail().
long long int_op(char op, long long a, long long b, int line);  ///< op: + - * / (floor) % (Python's sign)
/// int(d) for a float: truncates toward zero; NaN, inf and values outside int64 are errors.
long long int_of(double d, int line);

/// Bounds on one value a render builds, counted through every level (the evaluator's per-value
/// check sees only the top level: `[a, a]` repeated 64 times doubled a value with two items into
/// 2^64 elements, and `a = [a]` repeated nested it 100,000 deep for the recursive printers;
/// found replaying public reports). The evaluator uses the same sizes: 2^18 elements,
/// 16 MiB of text; 512 levels (requests may nest 256).
inline constexpr std::size_t kMaxValueElements = 1u << 18;  // 262,144: a 2,000-turn conversation holds ~2 x 10^4
inline constexpr std::size_t kMaxValueText = 16u << 20;
inline constexpr int kMaxValueDepth = 512;
inline constexpr long long kMaxTojsonIndent = 1024;

/// Fails (line) when `v` nests deeper than kMaxValueDepth, holds more than kMaxValueElements
/// elements or kMaxValueText bytes of strings, naming `what`. Iterative: safe on any value.
/// Returns the elements walked (the render charges them: the walk costs what the copy it checks did).
std::size_t check_value_size(const V& v, int line, const char* what);

/// Elements of `v` through every level (1 for a scalar), counting stops past `cap`. Iterative.
/// The render charges it for every container an expression yields: values are copied by value.
std::size_t deep_elements(const V& v, std::size_t cap);

/// The characters Python's str.strip() removes by default (ASCII whitespace).
inline const std::string kWs = " \t\n\r\f\v";

}  // namespace atlas::chat::jinja
