#include "suites/bfcl/py_lexer.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace atlas::suites::bfcl::detail {

namespace {

[[noreturn]] void fail(const std::string& what, std::size_t at) {
  throw PySyntaxError(what + " at offset " + std::to_string(at));
}

bool is_id_start(unsigned char c) { return std::isalpha(c) || c == '_' || c >= 0x80; }
bool is_id_char(unsigned char c) { return std::isalnum(c) || c == '_' || c >= 0x80; }
bool is_digit(char c, int base) {
  if (base == 16) return std::isxdigit(static_cast<unsigned char>(c));
  if (base == 8) return c >= '0' && c <= '7';
  if (base == 2) return c == '0' || c == '1';
  return c >= '0' && c <= '9';
}

// Code points >= 0x80 that CPython's tokenizer rejects outside strings ("invalid character"):
// the common punctuation blocks models emit (typographic quotes, ellipsis, CJK and full-width
// punctuation). Other non-ASCII letters are accepted as identifier characters.
bool is_invalid_non_ascii(std::string_view s, std::size_t i, std::size_t& len) {
  const auto c0 = static_cast<unsigned char>(s[i]);
  unsigned cp = 0;
  if (c0 >= 0xF0) { len = 4; cp = c0 & 0x07; }
  else if (c0 >= 0xE0) { len = 3; cp = c0 & 0x0F; }
  else if (c0 >= 0xC0) { len = 2; cp = c0 & 0x1F; }
  else { len = 1; return true; }
  if (i + len > s.size()) return true;
  for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  if (cp >= 0x80 && cp <= 0xBF) return cp != 0xAA && cp != 0xB5 && cp != 0xBA;  // Latin-1 symbols
  if (cp == 0xD7 || cp == 0xF7) return true;
  if (cp >= 0x2000 && cp <= 0x2BFF) return true;  // punctuation, arrows, math, box drawing
  if (cp >= 0x3000 && cp <= 0x303F) return true;  // CJK punctuation
  if (cp >= 0xFF00 && cp <= 0xFF0F) return true;  // full-width punctuation
  if (cp >= 0xFF1A && cp <= 0xFF20) return true;
  if (cp >= 0xFF3B && cp <= 0xFF40) return true;
  if (cp >= 0xFF5B && cp <= 0xFF65) return true;
  if (cp >= 0x1F000) return true;                 // emoji
  return false;
}

struct Lexer {
  std::string_view s;
  std::size_t i = 0;
  int depth = 0;
  std::vector<Token> out;

  char peek(std::size_t k = 0) const { return i + k < s.size() ? s[i + k] : '\0'; }

  void run() {
    while (i < s.size()) {
      const char c = s[i];
      if (c == ' ' || c == '\t' || c == '\f') {
        ++i;
      } else if (c == '\n') {
        if (depth == 0) push_simple(TokKind::newline, "\n");
        ++i;
      } else if (c == '#') {
        while (i < s.size() && s[i] != '\n') ++i;
      } else if (c == '\\') {
        if (peek(1) == '\n') { i += 2; }
        else fail("unexpected character after line continuation character", i);
      } else if (c == '\0') {
        fail("source code cannot contain null bytes", i);
      } else if (is_string_start()) {
        lex_string();
      } else if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && std::isdigit(static_cast<unsigned char>(peek(1))))) {
        lex_number();
      } else if (is_id_start(static_cast<unsigned char>(c))) {
        lex_name();
      } else {
        lex_op();
      }
    }
    if (depth > 0) fail("'(' was never closed", s.size());
    push_simple(TokKind::end, "");
  }

  void push_simple(TokKind k, std::string text) {
    Token t;
    t.kind = k;
    t.text = std::move(text);
    t.offset = i;
    out.push_back(std::move(t));
  }

  bool is_string_start() const {
    std::size_t k = i;
    while (k < s.size() && k - i < 2 && std::strchr("rRbBuUfF", s[k]) && s[k] != '\0') ++k;
    if (k >= s.size() || (s[k] != '\'' && s[k] != '"')) return false;
    std::string prefix;
    for (std::size_t p = i; p < k; ++p) prefix += static_cast<char>(std::tolower(static_cast<unsigned char>(s[p])));
    static const char* valid[] = {"", "r", "u", "b", "f", "br", "rb", "fr", "rf"};
    for (const char* v : valid) {
      if (prefix == v) return true;
    }
    return false;
  }

  void lex_name() {
    const std::size_t start = i;
    while (i < s.size() && is_id_char(static_cast<unsigned char>(s[i]))) {
      if (static_cast<unsigned char>(s[i]) >= 0x80) {
        std::size_t len = 1;
        if (is_invalid_non_ascii(s, i, len)) fail("invalid character", i);
        i += len;
      } else {
        ++i;
      }
    }
    Token t;
    t.kind = TokKind::name;
    t.text = std::string(s.substr(start, i - start));
    t.offset = start;
    out.push_back(std::move(t));
  }

  // Digits of `base` with single underscores between them; returns the digits without '_'.
  std::string digit_part(int base, bool allow_leading_underscore) {
    std::string digits;
    bool last_underscore = false;
    if (allow_leading_underscore && peek() == '_') {
      ++i;
      last_underscore = true;
    }
    while (i < s.size()) {
      if (s[i] == '_') {
        if (last_underscore || digits.empty()) fail("invalid decimal literal", i);
        last_underscore = true;
        ++i;
      } else if (is_digit(s[i], base)) {
        digits += s[i];
        last_underscore = false;
        ++i;
      } else {
        break;
      }
    }
    if (last_underscore) fail("invalid decimal literal", i);
    return digits;
  }

  void lex_number() {
    const std::size_t start = i;
    Token t;
    t.kind = TokKind::number;
    t.offset = start;
    if (peek() == '0' && std::strchr("xXoObB", peek(1)) && peek(1) != '\0') {
      const char p = static_cast<char>(std::tolower(static_cast<unsigned char>(peek(1))));
      const int base = p == 'x' ? 16 : p == 'o' ? 8 : 2;
      i += 2;
      const std::string digits = digit_part(base, true);
      if (digits.empty()) fail("invalid literal", i);
      errno = 0;
      const unsigned long long v = std::strtoull(digits.c_str(), nullptr, base);
      if (errno == ERANGE || v > static_cast<unsigned long long>(std::numeric_limits<std::int64_t>::max())) {
        fail("integer literal out of the supported 64-bit range", start);
      }
      t.num = PyValue(static_cast<std::int64_t>(v));
    } else {
      std::string int_part;
      if (peek() != '.') int_part = digit_part(10, false);
      bool is_float = false;
      std::string frac, exp;
      if (peek() == '.') {
        is_float = true;
        ++i;
        if (std::isdigit(static_cast<unsigned char>(peek()))) frac = digit_part(10, false);
      }
      if ((peek() == 'e' || peek() == 'E') &&
          (std::isdigit(static_cast<unsigned char>(peek(1))) ||
           ((peek(1) == '+' || peek(1) == '-') && std::isdigit(static_cast<unsigned char>(peek(2)))))) {
        is_float = true;
        ++i;
        if (peek() == '+' || peek() == '-') exp += s[i++];
        exp += digit_part(10, false);
      }
      if (peek() == 'j' || peek() == 'J') {
        ++i;
        t.is_imag = true;
      }
      const std::string src = int_part + (is_float ? "." + frac : "") + (exp.empty() ? "" : "e" + exp);
      if (is_float || t.is_imag) {
        t.num = PyValue(std::strtod(src.c_str(), nullptr));  // overflow gives inf, as CPython
      } else {
        if (int_part.size() > 1 && int_part[0] == '0' && int_part.find_first_not_of('0') != std::string::npos) {
          fail("leading zeros in decimal integer literals are not permitted", start);
        }
        errno = 0;
        const long long v = std::strtoll(int_part.c_str(), nullptr, 10);
        if (errno == ERANGE) fail("integer literal out of the supported 64-bit range", start);
        t.num = PyValue(static_cast<std::int64_t>(v));
      }
    }
    if (i < s.size() && is_id_char(static_cast<unsigned char>(s[i]))) fail("invalid decimal literal", i);
    t.text = std::string(s.substr(start, i - start));
    out.push_back(std::move(t));
  }

  unsigned hex_escape(std::size_t ndigits, std::size_t at) {
    if (i + ndigits > s.size()) fail("truncated escape", at);
    unsigned v = 0;
    for (std::size_t k = 0; k < ndigits; ++k) {
      const char c = s[i + k];
      if (!std::isxdigit(static_cast<unsigned char>(c))) fail("truncated escape", at);
      v = v * 16 + static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10);
    }
    i += ndigits;
    return v;
  }

  void lex_string() {
    const std::size_t start = i;
    bool raw = false, bytes = false, fstr = false;
    while (s[i] != '\'' && s[i] != '"') {
      const char p = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
      raw |= p == 'r';
      bytes |= p == 'b';
      fstr |= p == 'f';
      ++i;
    }
    const char q = s[i];
    const bool triple = peek(1) == q && peek(2) == q;
    i += triple ? 3 : 1;
    std::string value;
    for (;;) {
      if (i >= s.size()) fail("unterminated string literal", start);
      const char c = s[i];
      if (c == q && (!triple || (peek(1) == q && peek(2) == q))) {
        i += triple ? 3 : 1;
        break;
      }
      if (c == '\n' && !triple) fail("unterminated string literal", start);
      if (bytes && static_cast<unsigned char>(c) >= 0x80) fail("bytes can only contain ASCII literal characters", i);
      if (c != '\\') {
        value += c;
        ++i;
        continue;
      }
      // Backslash.
      const char n = peek(1);
      if (n == '\0' && i + 1 >= s.size()) fail("unterminated string literal", start);
      if (raw || fstr) {
        // Raw strings keep the backslash; it still protects the next character from ending the
        // literal. f-strings are only kept as source (BFCL rejects them when resolving).
        value += c;
        value += n;
        i += 2;
        continue;
      }
      const std::size_t at = i;
      i += 2;
      switch (n) {
        case '\n': break;
        case '\\': value += '\\'; break;
        case '\'': value += '\''; break;
        case '"': value += '"'; break;
        case 'a': value += '\a'; break;
        case 'b': value += '\b'; break;
        case 'f': value += '\f'; break;
        case 'n': value += '\n'; break;
        case 'r': value += '\r'; break;
        case 't': value += '\t'; break;
        case 'v': value += '\v'; break;
        case 'x': {
          const unsigned v = hex_escape(2, at);
          if (bytes) value += static_cast<char>(v); else append_utf8(value, v);
          break;
        }
        case 'u':
        case 'U':
        case 'N':
          if (bytes) {
            value += '\\';
            value += n;
            break;
          }
          if (n == 'N') fail("\\N{...} escapes are not supported", at);
          {
            const unsigned v = hex_escape(n == 'u' ? 4 : 8, at);
            if (v > 0x10FFFF) fail("illegal Unicode character", at);
            append_utf8(value, v);
          }
          break;
        default:
          if (n >= '0' && n <= '7') {
            unsigned v = static_cast<unsigned>(n - '0');
            for (int k = 0; k < 2 && peek() >= '0' && peek() <= '7'; ++k) v = v * 8 + static_cast<unsigned>(s[i++] - '0');
            if (bytes) value += static_cast<char>(v & 0xFF); else append_utf8(value, v);
          } else {
            value += '\\';  // unknown escapes keep the backslash (a DeprecationWarning only)
            value += n;
          }
      }
    }
    Token t;
    t.kind = TokKind::string;
    t.offset = start;
    t.text = std::string(s.substr(start, i - start));
    t.str_value = std::move(value);
    t.is_bytes = bytes;
    t.is_fstring = fstr;
    out.push_back(std::move(t));
  }

  void lex_op() {
    static const char* ops3[] = {"**=", "//=", ">>=", "<<=", "..."};
    static const char* ops2[] = {"!=", "==", "<=", ">=", "**", "//", "<<", ">>", "->", ":=", "+=", "-=",
                                 "*=", "/=", "%=", "&=", "|=", "^=", "@="};
    const std::size_t start = i;
    for (const char* op : ops3) {
      if (s.substr(i, 3) == op) { i += 3; push_op(op, start); return; }
    }
    for (const char* op : ops2) {
      if (s.substr(i, 2) == op) { i += 2; push_op(op, start); return; }
    }
    const char c = s[i];
    if (std::strchr("+-*/%@&|^~<>()[]{},:.;=", c) == nullptr) {
      std::size_t len = 1;
      is_invalid_non_ascii(s, i, len);
      fail("invalid character", i);
    }
    ++i;
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') {
      if (depth == 0) fail("unmatched closing bracket", start);
      --depth;
    }
    push_op(std::string(1, c), start);
  }

  void push_op(std::string op, std::size_t start) {
    Token t;
    t.kind = TokKind::op;
    t.text = std::move(op);
    t.offset = start;
    out.push_back(std::move(t));
  }
};

}  // namespace

std::vector<Token> tokenize(std::string_view text) {
  // CPython reads "\r\n" and a lone "\r" as "\n" (a comment ends there; a string cannot span it).
  std::string translated;
  translated.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r') {
      translated += '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      translated += text[i];
    }
  }
  Lexer lx;
  lx.s = translated;
  lx.run();
  return std::move(lx.out);
}

}  // namespace atlas::suites::bfcl::detail
