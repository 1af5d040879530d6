#pragma once
// Tokens of a Python 3 expression (the tokenizer half of `ast.parse`). Internal to the parser.
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/unicode.hpp"
#include "suites/bfcl/py_ast.hpp"

namespace atlas::suites::bfcl::detail {

enum class TokKind { name, number, string, op, newline, end };

struct Token {
  TokKind kind = TokKind::end;
  std::string text;         ///< name, operator, or the number's source
  // Strings: the decoded value (UTF-8; bytes as Latin-1 code units) and kind.
  std::string str_value;
  bool is_bytes = false;
  bool is_fstring = false;
  // Numbers.
  PyValue num;
  bool is_imag = false;
  std::size_t offset = 0;
};

/// Splits `text` into tokens; newlines inside brackets are dropped (implicit line joining).
/// Throws PySyntaxError.
std::vector<Token> tokenize(std::string_view text);

using engine::unicode::append_utf8;  // one UTF-8 encoder for the project (engine/tokenizer/unicode.hpp)

}  // namespace atlas::suites::bfcl::detail
