#pragma once
// Python evaluation of a constant expression: what BFCL's `eval(ast.unparse(binop))` computes
// for arithmetic over literals (spec §2.2 7: `2*5` -> 10, `10**-2` -> 0.01, `"a"+"b"` -> "ab").
// Names and calls are not evaluated (BFCL's eval would see builtins such as abs(); we reject
// them: docs/bfcl.md).
#include <stdexcept>

#include "suites/bfcl/py_ast.hpp"

namespace atlas::suites::bfcl {

/// Raised when BFCL's decoder would raise (unsupported node, NameError, TypeError,
/// ZeroDivisionError, ...): the entry becomes `ast_decoder:decoder_failed`. A BfclError, like
/// PySyntaxError.
class PyDecodeError : public BfclError {
 public:
  using BfclError::BfclError;
};

/// Evaluates `node` with Python semantics. Throws PyDecodeError.
PyValue py_eval(const PyNode& node);

}  // namespace atlas::suites::bfcl
