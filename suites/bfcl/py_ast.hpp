#pragma once
// A Python 3 expression parser: the part of `ast.parse(text, mode="eval")` that BFCL's prompt
// decoder needs (spec §2.2 step 4). Anything Python rejects is rejected here with PySyntaxError;
// a few valid but exotic constructs (comprehensions, walrus, `\N{...}` escapes) are rejected too
// (docs/bfcl.md lists them).
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "suites/bfcl/bfcl_error.hpp"
#include "suites/bfcl/py_value.hpp"

namespace atlas::suites::bfcl {

/// Raised for text that is not a Python expression (BFCL: `ast.parse` raised). A BfclError: the
/// text is input, so one that escapes is exit 3, never an internal error.
class PySyntaxError : public BfclError {
 public:
  using BfclError::BfclError;
};

enum class PyNodeKind {
  empty,       ///< an absent slice bound or the key of `**m` in a dict display
  constant,    ///< str/int/float/bool/None in `value`; see `special`
  name,        ///< `text` = identifier
  attribute,   ///< kids[0].`text`
  call,        ///< kids[0](kids[1..1+nargs), keywords: kids[1+nargs..] named by kw_names)
  subscript,   ///< kids[0][kids[1]]
  slice,       ///< kids = lower, upper, step (empty when absent)
  list, tuple, set,
  dict,        ///< kids = key0, value0, key1, value1, ... (key empty for `**m`)
  unary,       ///< `text` op ("-", "+", "~", "not") kids[0]
  binop,       ///< kids[0] `text` kids[1]
  boolop,      ///< kids joined by `text` ("and" / "or")
  compare,     ///< kids[0] ops[0] kids[1] ops[1] kids[2] ...
  ifexp,       ///< kids = body, test, orelse
  lambda,      ///< `text` = parameter source, kids[0] = body
  starred,     ///< *kids[0]
  joined_str,  ///< f-string; `text` = its source
};

/// What a constant is beyond its PyValue: BFCL treats `...` as the string "..." and we do not
/// model bytes or complex values (their source is kept in `text` for unparsing).
enum class PyConstSpecial { none, ellipsis, bytes, complex };

struct PyNode {
  PyNodeKind kind = PyNodeKind::empty;
  PyValue value;
  PyConstSpecial special = PyConstSpecial::none;
  std::string text;
  std::vector<PyNode> kids;
  std::vector<std::optional<std::string>> kw_names;  ///< call keywords (nullopt for `**m`)
  std::vector<std::string> ops;                      ///< compare operators

  std::size_t call_nargs() const { return kids.size() - 1 - kw_names.size(); }
};

/// Parses one expression (`ast.parse(text, mode="eval").body`). Throws PySyntaxError.
PyNode parse_python_expression(std::string_view text);

/// `ast.unparse(node)` (CPython 3.9+ layout: ", " separators, spaced binary operators,
/// parentheses from precedence, constants as repr).
std::string unparse(const PyNode& node);

}  // namespace atlas::suites::bfcl
