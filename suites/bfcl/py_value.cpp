#include "suites/bfcl/py_value.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace atlas::suites::bfcl {

const char* type_name(PyType t) {
  switch (t) {
    case PyType::none: return "NoneType";
    case PyType::boolean: return "bool";
    case PyType::integer: return "int";
    case PyType::floating: return "float";
    case PyType::string: return "str";
    case PyType::list: return "list";
    case PyType::tuple: return "tuple";
    case PyType::dict: return "dict";
    case PyType::other: return "other";
  }
  return "?";
}

std::string type_name_of(const PyValue& v) {
  return v.is(PyType::other) ? std::get<PyOther>(v.v).type : type_name(v.type());
}

const std::vector<PyValue>& PyValue::seq() const {
  if (is(PyType::tuple)) return tuple().items;
  return list().items;
}

namespace {

bool is_number(const PyValue& v) {
  return v.is(PyType::boolean) || v.is(PyType::integer) || v.is(PyType::floating);
}

// Python compares int and float exactly (no rounding of the int).
bool int_equals_float(std::int64_t i, double d) {
  if (!std::isfinite(d) || d != std::floor(d)) return false;
  if (d < -9223372036854775808.0 || d >= 9223372036854775808.0) return false;
  return static_cast<std::int64_t>(d) == i;
}

bool numbers_equal(const PyValue& a, const PyValue& b) {
  auto as_int = [](const PyValue& v, std::int64_t& out) {
    if (v.is(PyType::boolean)) { out = std::get<bool>(v.v) ? 1 : 0; return true; }
    if (v.is(PyType::integer)) { out = std::get<std::int64_t>(v.v); return true; }
    return false;
  };
  std::int64_t ia = 0, ib = 0;
  const bool a_int = as_int(a, ia), b_int = as_int(b, ib);
  if (a_int && b_int) return ia == ib;
  if (a_int) return int_equals_float(ia, std::get<double>(b.v));
  if (b_int) return int_equals_float(ib, std::get<double>(a.v));
  return std::get<double>(a.v) == std::get<double>(b.v);
}

bool seq_equal(const std::vector<PyValue>& a, const std::vector<PyValue>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!py_equal(a[i], b[i])) return false;
  }
  return true;
}

}  // namespace

bool py_equal(const PyValue& a, const PyValue& b) {
  if (is_number(a) && is_number(b)) return numbers_equal(a, b);
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case PyType::none: return true;
    case PyType::string: return a.str() == b.str();
    case PyType::list: return seq_equal(a.list().items, b.list().items);
    case PyType::tuple: return seq_equal(a.tuple().items, b.tuple().items);
    case PyType::dict: {
      const auto& da = a.dict().items;
      if (da.size() != b.dict().items.size()) return false;
      for (const auto& [k, v] : da) {
        const PyValue* other = dict_find(b.dict(), k);
        if (!other || !py_equal(v, *other)) return false;
      }
      return true;
    }
    case PyType::other:
      return std::get<PyOther>(a.v).type == std::get<PyOther>(b.v).type && std::get<PyOther>(a.v).repr == std::get<PyOther>(b.v).repr;
    default: return false;  // numbers handled above
  }
}

bool py_contains(const std::vector<PyValue>& items, const PyValue& v) {
  for (const auto& item : items) {
    if (py_equal(item, v)) return true;
  }
  return false;
}

bool py_hashable(const PyValue& v) {
  if (v.is(PyType::list) || v.is(PyType::dict)) return false;
  if (v.is(PyType::tuple)) {
    for (const auto& item : v.tuple().items) {
      if (!py_hashable(item)) return false;
    }
  }
  return true;
}

void dict_set(PyDict& d, PyValue key, PyValue value) {
  for (auto& [k, v] : d.items) {
    if (py_equal(k, key)) {
      v = std::move(value);
      return;
    }
  }
  d.items.emplace_back(std::move(key), std::move(value));
}

const PyValue* dict_find(const PyDict& d, const PyValue& key) {
  for (const auto& [k, v] : d.items) {
    if (py_equal(k, key)) return &v;
  }
  return nullptr;
}

std::string py_repr_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  // Shortest round-trip digits, then CPython's float_repr layout: positional when the decimal
  // exponent is in [-4, 16), else d.ddde+XX (PyOS_double_to_string with 'r').
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  const auto epos = sci.find('e');
  std::string mant = sci.substr(0, epos);
  const int exp = std::stoi(sci.substr(epos + 1));
  std::string digits;
  for (char c : mant) {
    if (c != '.') digits += c;
  }
  if (exp >= -4 && exp < 16) {
    std::string out;
    if (exp < 0) {
      out = "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
    } else {
      const auto int_len = static_cast<std::size_t>(exp + 1);
      if (digits.size() <= int_len) {
        out = digits + std::string(int_len - digits.size(), '0') + ".0";
      } else {
        out = digits.substr(0, int_len) + "." + digits.substr(int_len);
      }
    }
    return sign + out;
  }
  std::string out = digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char ebuf[16];
  std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  return sign + out + ebuf;
}

std::string py_repr_str(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == static_cast<unsigned char>(quote)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else if (c == 0xC2 && i + 1 < s.size() &&
               static_cast<unsigned char>(s[i + 1]) >= 0x80 && static_cast<unsigned char>(s[i + 1]) <= 0xA0) {
      // U+0080..U+00A0 are not printable: CPython writes \x80..\xa0.
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(s[i + 1]));
      out += buf;
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += quote;
  return out;
}

std::string py_repr(const PyValue& v) {
  switch (v.type()) {
    case PyType::none: return "None";
    case PyType::boolean: return std::get<bool>(v.v) ? "True" : "False";
    case PyType::integer: return std::to_string(std::get<std::int64_t>(v.v));
    case PyType::floating: return py_repr_float(std::get<double>(v.v));
    case PyType::string: return py_repr_str(v.str());
    case PyType::list:
    case PyType::tuple: {
      const bool is_tuple = v.is(PyType::tuple);
      std::string out = is_tuple ? "(" : "[";
      const auto& items = v.seq();
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        out += py_repr(items[i]);
      }
      if (is_tuple && items.size() == 1) out += ",";
      out += is_tuple ? ")" : "]";
      return out;
    }
    case PyType::dict: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, val] : v.dict().items) {
        if (!first) out += ", ";
        first = false;
        out += py_repr(k) + ": " + py_repr(val);
      }
      return out + "}";
    }
    case PyType::other: return std::get<PyOther>(v.v).repr;
  }
  return "?";
}

PyValue from_json(const nlohmann::ordered_json& j) {
  using T = nlohmann::ordered_json::value_t;
  switch (j.type()) {
    case T::null: return PyValue{};
    case T::boolean: return PyValue(j.get<bool>());
    case T::number_integer: return PyValue(j.get<std::int64_t>());
    case T::number_unsigned: {
      const auto u = j.get<std::uint64_t>();
      if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return PyValue(static_cast<std::int64_t>(u));
      }
      return PyValue(static_cast<double>(u));
    }
    case T::number_float: return PyValue(j.get<double>());
    case T::string: return PyValue(j.get<std::string>());
    case T::array: {
      PyList l;
      for (const auto& e : j) l.items.push_back(from_json(e));
      return PyValue(std::move(l));
    }
    case T::object: {
      PyDict d;
      for (const auto& [k, e] : j.items()) dict_set(d, PyValue(k), from_json(e));
      return PyValue(std::move(d));
    }
    default: return PyValue(std::string{});
  }
}

nlohmann::ordered_json to_json(const PyValue& v) {
  switch (v.type()) {
    case PyType::none: return nullptr;
    case PyType::boolean: return std::get<bool>(v.v);
    case PyType::integer: return std::get<std::int64_t>(v.v);
    case PyType::floating: return std::get<double>(v.v);
    case PyType::string: return v.str();
    case PyType::list:
    case PyType::tuple: {
      auto arr = nlohmann::ordered_json::array();
      for (const auto& item : v.seq()) arr.push_back(to_json(item));
      return arr;
    }
    case PyType::dict: {
      auto obj = nlohmann::ordered_json::object();
      for (const auto& [k, val] : v.dict().items) obj[k.is_str() ? k.str() : py_repr(k)] = to_json(val);
      return obj;
    }
    case PyType::other: return std::get<PyOther>(v.v).repr;
  }
  return nullptr;
}

}  // namespace atlas::suites::bfcl
