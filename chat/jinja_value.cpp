#include "chat/jinja_value.hpp"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "chat/error.hpp"

namespace atlas::chat::jinja {

[[noreturn]] void fail(int line, const std::string& what) {
  throw TemplateError("chat template line " + std::to_string(line) + ": " + what);
}

long long int_op(char op, long long a, long long b, int line) {
  long long r = 0;
  bool overflow = false;
  switch (op) {
    case '+': overflow = __builtin_add_overflow(a, b, &r); break;
    case '-': overflow = __builtin_sub_overflow(a, b, &r); break;
    case '*': overflow = __builtin_mul_overflow(a, b, &r); break;
    case '/':
    case '%':
      if (b == 0) fail(line, "integer division or modulo by zero");
      if (a == std::numeric_limits<long long>::min() && b == -1) {
        overflow = op == '/';  // the quotient 2^63 does not fit; the remainder is 0
        break;
      }
      r = op == '/' ? a / b : a % b;
      // C++ truncates toward zero; Python floors (the remainder takes the divisor's sign).
      if (a % b != 0 && ((a % b < 0) != (b < 0))) r = op == '/' ? r - 1 : r + b;
      break;
    default: fail(line, std::string("unknown integer operator '") + op + "'");
  }
  if (overflow) {
    fail(line, "integer overflow: " + std::to_string(a) + " " + (op == '/' ? std::string("//") : std::string(1, op)) + " " +
                   std::to_string(b) + " does not fit 64 bits");
  }
  return r;
}

long long int_of(double d, int line) {
  // 2^63 is exact in a double; every double in [-2^63, 2^63) truncates into range (NaN fails).
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) {
    fail(line, "int() of " + python_repr(V(d)) + ": not a 64-bit integer");
  }
  return static_cast<long long>(d);
}

bool truthy(const V& v) {
  if (is_undef(v) || v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<long long>() != 0;
  if (v.is_number()) return v.get<double>() != 0.0;
  if (v.is_string()) return !v.get_ref<const std::string&>().empty();
  return !v.empty();
}

std::size_t check_value_size(const V& v, int line, const char* what) {
  std::vector<std::pair<const V*, int>> pending{{&v, 0}};
  std::size_t elements = 0, bytes = 0;
  while (!pending.empty()) {
    const auto [x, depth] = pending.back();
    pending.pop_back();
    if (depth > kMaxValueDepth) fail(line, std::string(what) + " nests deeper than " + std::to_string(kMaxValueDepth) + " levels");
    if (++elements > kMaxValueElements) fail(line, std::string(what) + " has more than " + std::to_string(kMaxValueElements) + " elements");
    if (x->is_string()) bytes += x->get_ref<const std::string&>().size();
    if (x->is_object()) {
      for (auto it = x->begin(); it != x->end(); ++it) pending.emplace_back(&*it, depth + 1);
    } else if (x->is_array()) {
      for (const auto& c : *x) pending.emplace_back(&c, depth + 1);
    }
    if (bytes > kMaxValueText) fail(line, std::string(what) + " holds more than " + std::to_string(kMaxValueText) + " bytes of text");
  }
  return elements;
}

std::size_t deep_elements(const V& v, std::size_t cap) {
  std::vector<const V*> pending{&v};
  std::size_t n = 0;
  while (!pending.empty() && n <= cap) {
    const V* x = pending.back();
    pending.pop_back();
    ++n;
    if (x->is_object() || x->is_array()) {
      for (auto it = x->begin(); it != x->end(); ++it) pending.push_back(&*it);
    }
  }
  return n;
}

void dump_python_json(const V& v, int indent, int depth, std::string& out) {
  if (out.size() > kMaxValueText) throw TemplateError("chat template: tojson text longer than " + std::to_string(kMaxValueText) + " bytes");
  if (v.is_object() || v.is_array()) {
    const bool obj = v.is_object();
    out += obj ? '{' : '[';
    if (v.empty()) {
      out += obj ? '}' : ']';
      return;
    }
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!first) out += indent >= 0 ? "," : ", ";
      first = false;
      if (indent >= 0) out.append(1, '\n').append(static_cast<std::size_t>(indent * (depth + 1)), ' ');
      if (obj) {
        out += V(it.key()).dump(-1, ' ', false, V::error_handler_t::replace);
        out += ": ";
      }
      dump_python_json(*it, indent, depth + 1, out);
    }
    if (indent >= 0) out.append(1, '\n').append(static_cast<std::size_t>(indent * depth), ' ');
    out += obj ? '}' : ']';
    return;
  }
  if (is_undef(v)) {
    out += "null";
    return;
  }
  out += v.dump(-1, ' ', false, V::error_handler_t::replace);
}

std::string to_text(const V& v) {
  if (is_undef(v)) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "None";
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) {
    std::string s = v.dump();
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    return s;
  }
  return python_repr(v);
}

std::string python_repr(const V& v) {
  if (v.is_string()) {
    std::string s = "'";
    for (char c : v.get_ref<const std::string&>()) {
      if (c == '\'' || c == '\\') s += '\\';
      if (c == '\n') {
        s += "\\n";
        continue;
      }
      s += c;
    }
    return s + "'";
  }
  if (v.is_array()) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + python_repr(v[i]);
    return s + "]";
  }
  if (v.is_object()) {
    std::string s = "{";
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      s += (first ? "" : ", ") + python_repr(V(it.key())) + ": " + python_repr(*it);
      first = false;
    }
    return s + "}";
  }
  return to_text(v);
}

std::size_t utf8_length(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string strip_chars(const std::string& s, const std::string& chars, bool left, bool right) {
  std::size_t b = 0, e = s.size();
  if (left) while (b < e && chars.find(s[b]) != std::string::npos) ++b;
  if (right) while (e > b && chars.find(s[e - 1]) != std::string::npos) --e;
  return s.substr(b, e - b);
}

std::string replace_all(const std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  if (to.size() > from.size()) {  // the result's size first: 'aaaa'.replace('a', a 16 MiB string)
    std::size_t hits = 0;
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + from.size())) ++hits;
    if (hits > 0 && (to.size() - from.size()) > (kMaxValueText - std::min(s.size(), kMaxValueText)) / hits)
      throw TemplateError("chat template: replace() would build more than " + std::to_string(kMaxValueText) + " bytes");
  }
  std::string out;
  std::size_t pos = 0;
  for (std::size_t hit; (hit = s.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out += s.substr(pos, hit - pos) + to;
  }
  return out + s.substr(pos);
}

}  // namespace atlas::chat::jinja
