#include "chat/jinja_filters.hpp"

#include <algorithm>
#include <cctype>

namespace atlas::chat::jinja {

V apply_filter(const std::string& f, const V& v, const FilterArg& arg, int line) {
  if (f == "safe") return v;
  if (f == "trim") return strip_chars(to_text(v), kWs, true, true);
  if (f == "tojson") {
    V ind = arg("indent", 0, nullptr);
    // indent x depth spaces per line: 2000000000 asked for terabytes (and overflowed int).
    if (ind.is_number_integer() && ind.get<long long>() > kMaxTojsonIndent)
      fail(line, "tojson indent " + ind.dump() + " is too large (at most " + std::to_string(kMaxTojsonIndent) + ")");
    std::string out;
    dump_python_json(v, ind.is_number_integer() ? static_cast<int>(std::max(ind.get<long long>(), -1LL)) : -1, 0, out);
    return out;
  }
  if (f == "length" || f == "count") {
    if (v.is_string()) return static_cast<long long>(utf8_length(v.get<std::string>()));
    if (v.is_array() || v.is_object()) return static_cast<long long>(v.size());
    if (is_undef(v) || v.is_null()) return 0;
    fail(line, "length of a value without one: " + python_repr(v));
  }
  if (f == "string") return to_text(v);
  if (f == "lower" || f == "upper") {
    std::string s = to_text(v);
    for (auto& c : s) c = static_cast<char>(f == "lower" ? std::tolower(static_cast<unsigned char>(c)) : std::toupper(static_cast<unsigned char>(c)));
    return s;
  }
  if (f == "capitalize" || f == "title") {
    std::string s = to_text(v);
    bool start = true;
    for (auto& c : s) {
      const unsigned char u = static_cast<unsigned char>(c);
      if (f == "capitalize") {
        c = static_cast<char>(start ? std::toupper(u) : std::tolower(u));
        start = false;
      } else {
        c = static_cast<char>(start ? std::toupper(u) : std::tolower(u));
        start = !std::isalnum(u);
      }
    }
    return s;
  }
  if (f == "first" || f == "last") {
    if (v.is_array()) return v.empty() ? undefined() : (f == "first" ? v.front() : v.back());
    if (v.is_string()) {
      const std::string& s = v.get_ref<const std::string&>();
      return s.empty() ? undefined() : V(std::string(1, f == "first" ? s.front() : s.back()));
    }
    return undefined();
  }
  if (f == "join") {
    const std::string sep = to_text(arg("d", 0, ""));
    std::string out;
    if (v.is_array()) {
      for (std::size_t i = 0; i < v.size(); ++i) {
        out += (i ? sep : "") + to_text(v[i]);  // checked as it grows: 10^6 items x a 16 MiB string
        if (out.size() > kMaxValueText) fail(line, "join() builds more than " + std::to_string(kMaxValueText) + " bytes");
      }
    }
    return out;
  }
  if (f == "default" || f == "d") {
    const bool boolean = truthy(arg("boolean", 1, false));
    if (is_undef(v) || (boolean && !truthy(v))) return arg("default_value", 0, "");
    return v;
  }
  if (f == "items") {
    V out = V::array();
    if (v.is_object()) {
      for (auto it = v.begin(); it != v.end(); ++it) out.push_back(V::array({it.key(), *it}));
    }
    return out;
  }
  if (f == "list") {
    if (v.is_array()) return v;
    V out = V::array();
    if (v.is_object()) for (auto it = v.begin(); it != v.end(); ++it) out.push_back(it.key());
    if (v.is_string()) for (char c : v.get<std::string>()) out.push_back(std::string(1, c));
    return out;
  }
  if (f == "reverse") {
    if (v.is_string()) {
      std::string s = v.get<std::string>();
      std::reverse(s.begin(), s.end());
      return s;
    }
    if (v.is_array()) {
      V out = V::array();
      for (auto it = v.rbegin(); it != v.rend(); ++it) out.push_back(*it);
      return out;
    }
    return v;
  }
  if (f == "int") {
    if (v.is_number_integer()) return v;  // through a double, 2^53 + 1 would lose its last bit
    if (v.is_number()) return int_of(v.get<double>(), line);
    if (v.is_string()) {
      try {
        return std::stoll(v.get<std::string>());
      } catch (const std::exception&) {
        return 0;
      }
    }
    return 0;
  }
  if (f == "float") {
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      try {
        return std::stod(v.get<std::string>());
      } catch (const std::exception&) {
        return 0.0;
      }
    }
    return 0.0;
  }
  if (f == "replace") {
    std::string s = to_text(v);
    const std::string from = to_text(arg("old", 0, "")), to = to_text(arg("new", 1, ""));
    return replace_all(s, from, to);
  }
  fail(line, "unsupported filter '|" + f + "'");
}

}  // namespace atlas::chat::jinja
