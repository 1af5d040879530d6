// BFCL's decoding of model output (suites/bfcl/decode.hpp): the Python call parser
// ("[func(a=1, b='x')]": lexer, parser, constant evaluation), the JSON return format, the
// format gate, and unparse of whatever parsed.
#include "common/error.hpp"
#include "fuzz/fuzz_target.hpp"
#include "suites/bfcl/decode.hpp"
#include "suites/bfcl/py_ast.hpp"

ATLAS_FUZZ_TARGET(bfcl_python) {
  using namespace atlas::suites::bfcl;
  const std::string_view text = atlas::fuzz::text(data, size);
  try {
    const PyValue v = decode_python(text);
    (void)as_calls(v);
    (void)is_empty_output(v);
    (void)py_repr(v);
    (void)to_json(v);
  } catch (const PyDecodeError& e) {
    atlas::fuzz::rejected(e);
  } catch (const atlas::InputError& e) {
    atlas::fuzz::rejected(e);
  }
  std::string printed;
  try {
    printed = unparse(parse_python_expression(text));
  } catch (const PySyntaxError& e) {
    atlas::fuzz::rejected(e);
    printed.clear();
  }
  if (!printed.empty()) {
    try {
      const std::string again = unparse(parse_python_expression(printed));
      atlas::fuzz::check(again == printed, "unparse is a fixed point (ast.unparse(ast.parse(unparse(x))) == unparse(x))");
    } catch (const PySyntaxError& e) {
      atlas::fuzz::rejected(e);
      atlas::fuzz::check(false, "what unparse prints parses again");
    }
  }
  try {
    const PyValue v = decode_json_format(text);
    (void)as_calls(v);
  } catch (const PyDecodeError& e) {
    atlas::fuzz::rejected(e);
  } catch (const atlas::InputError& e) {
    atlas::fuzz::rejected(e);
  }
  return 0;
}
