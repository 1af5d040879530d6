#include "chat/jinja_lexer.hpp"

#include <cctype>
#include <stdexcept>

#include "chat/jinja_value.hpp"

namespace atlas::chat::jinja {

std::vector<Tok> lex_expr(const std::string& s, int line) {
  std::vector<Tok> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      out.push_back({Tok::name, s.substr(i, j - i)});
      i = j;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t j = i;
      bool real = false;
      while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      if (j + 1 < s.size() && s[j] == '.' && std::isdigit(static_cast<unsigned char>(s[j + 1]))) {
        real = true;
        ++j;
        while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      }
      std::string num = s.substr(i, j - i);
      num.erase(std::remove(num.begin(), num.end(), '_'), num.end());
      Tok t;
      t.kind = real ? Tok::real : Tok::integer;
      t.text = num;
      try {  // Jinja's ints are Python's (unbounded); ours are 64-bit: say so rather than throw out_of_range
        if (real) t.fval = std::stod(num);
        else t.ival = std::stoll(num);
      } catch (const std::out_of_range&) {
        fail(line, "number literal " + (num.size() > 40 ? num.substr(0, 40) + "..." : num) + " is out of range");
      }
      out.push_back(t);
      i = j;
      continue;
    }
    if (c == '\'' || c == '"') {
      std::string v;
      std::size_t j = i + 1;
      bool closed = false;
      for (; j < s.size(); ++j) {
        if (s[j] == '\\' && j + 1 < s.size()) {
          const char e = s[++j];
          switch (e) {
            case 'n': v += '\n'; break;
            case 't': v += '\t'; break;
            case 'r': v += '\r'; break;
            case '\\': v += '\\'; break;
            case '\'': v += '\''; break;
            case '"': v += '"'; break;
            default: v += '\\'; v += e;
          }
          continue;
        }
        if (s[j] == c) {
          closed = true;
          break;
        }
        v += s[j];
      }
      if (!closed) fail(line, "unterminated string literal");
      out.push_back({Tok::str, v});
      i = j + 1;
      continue;
    }
    static const char* two[] = {"==", "!=", "<=", ">=", "//", "**"};
    bool matched = false;
    for (const char* t : two) {
      if (s.compare(i, 2, t) == 0) {
        out.push_back({Tok::op, t});
        i += 2;
        matched = true;
        break;
      }
    }
    if (matched) continue;
    if (std::string("()[]{},.:|~+-*/%<>=").find(c) != std::string::npos) {
      out.push_back({Tok::op, std::string(1, c)});
      ++i;
      continue;
    }
    fail(line, std::string("unexpected character '") + c + "'");
  }
  out.push_back({Tok::end, ""});
  return out;
}

}  // namespace atlas::chat::jinja
