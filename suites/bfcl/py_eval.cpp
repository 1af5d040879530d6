#include "suites/bfcl/py_eval.hpp"

#include <cmath>
#include <limits>

namespace atlas::suites::bfcl {

namespace {

[[noreturn]] void fail(const std::string& what) { throw PyDecodeError(what); }

bool is_intlike(const PyValue& v) { return v.is(PyType::integer) || v.is(PyType::boolean); }
bool is_num(const PyValue& v) { return is_intlike(v) || v.is(PyType::floating); }
std::int64_t as_int(const PyValue& v) {
  return v.is(PyType::boolean) ? (std::get<bool>(v.v) ? 1 : 0) : std::get<std::int64_t>(v.v);
}
double as_float(const PyValue& v) {
  return v.is(PyType::floating) ? std::get<double>(v.v) : static_cast<double>(as_int(v));
}

template <typename Op>
std::int64_t checked(Op op, std::int64_t x, std::int64_t y) {
  std::int64_t r = 0;
  if (op(x, y, &r)) fail("integer result outside the supported 64-bit range");
  return r;
}

// Python floor division and modulo (result takes the divisor's sign).
std::int64_t floordiv(std::int64_t a, std::int64_t b) {
  if (b == 0) fail("ZeroDivisionError: integer division or modulo by zero");
  if (a == std::numeric_limits<std::int64_t>::min() && b == -1) fail("integer result outside the supported 64-bit range");
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
std::int64_t pymod(std::int64_t a, std::int64_t b) {
  if (b == 0) fail("ZeroDivisionError: integer division or modulo by zero");
  if (b == -1) return 0;
  std::int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
double pyfmod(double a, double b) {
  if (b == 0) fail("ZeroDivisionError: float modulo");
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  if (r == 0) r = std::copysign(0.0, b);
  return r;
}

PyValue repeat(const PyValue& seq, std::int64_t n) {
  if (n < 0) n = 0;
  if (seq.is_str()) {
    std::string out;
    for (std::int64_t i = 0; i < n; ++i) out += seq.str();
    return PyValue(out);
  }
  std::vector<PyValue> items;
  for (std::int64_t i = 0; i < n; ++i) items.insert(items.end(), seq.seq().begin(), seq.seq().end());
  if (seq.is(PyType::tuple)) return PyValue(PyTuple{items});
  return PyValue(PyList{items});
}

PyValue int_pow(std::int64_t a, std::int64_t b) {
  if (b < 0) {
    if (a == 0) fail("ZeroDivisionError: 0.0 cannot be raised to a negative power");
    return PyValue(std::pow(static_cast<double>(a), static_cast<double>(b)));
  }
  std::int64_t result = 1;
  for (std::int64_t i = 0; i < b; ++i) {
    if (__builtin_mul_overflow(result, a, &result)) fail("integer result outside the supported 64-bit range");
    if (result == 0 || result == 1) break;
    if (result == -1) {
      result = ((b - i - 1) % 2 == 0) ? -1 : 1;
      break;
    }
  }
  return PyValue(result);
}

PyValue binop(const std::string& op, const PyValue& a, const PyValue& b) {
  if (is_num(a) && is_num(b)) {
    const bool ints = is_intlike(a) && is_intlike(b);
    if (op == "&" || op == "|" || op == "^" || op == "<<" || op == ">>") {
      if (!ints) fail("TypeError: unsupported operand type(s) for " + op);
      if (op == "&" || op == "|" || op == "^") {
        if (a.is(PyType::boolean) && b.is(PyType::boolean)) {
          const bool x = std::get<bool>(a.v), y = std::get<bool>(b.v);
          return PyValue(op == "&" ? (x && y) : op == "|" ? (x || y) : (x != y));
        }
        const std::int64_t x = as_int(a), y = as_int(b);
        return PyValue(op == "&" ? (x & y) : op == "|" ? (x | y) : (x ^ y));
      }
      const std::int64_t x = as_int(a), y = as_int(b);
      if (y < 0) fail("ValueError: negative shift count");
      if (op == ">>") return PyValue(y >= 63 ? (x < 0 ? -1 : 0) : (x >> y));
      if (x == 0) return PyValue(std::int64_t{0});
      if (y >= 63 || (x > 0 ? x > (std::numeric_limits<std::int64_t>::max() >> y)
                            : x < (std::numeric_limits<std::int64_t>::min() >> y))) {
        fail("integer result outside the supported 64-bit range");
      }
      return PyValue(x * (std::int64_t{1} << y));
    }
    if (op == "/") {
      const double y = as_float(b);
      if (y == 0) fail("ZeroDivisionError: division by zero");
      return PyValue(as_float(a) / y);
    }
    if (ints) {
      const std::int64_t x = as_int(a), y = as_int(b);
      auto add = [](std::int64_t a, std::int64_t b, std::int64_t* r) { return __builtin_add_overflow(a, b, r); };
      auto sub = [](std::int64_t a, std::int64_t b, std::int64_t* r) { return __builtin_sub_overflow(a, b, r); };
      auto mul = [](std::int64_t a, std::int64_t b, std::int64_t* r) { return __builtin_mul_overflow(a, b, r); };
      if (op == "+") return PyValue(checked(add, x, y));
      if (op == "-") return PyValue(checked(sub, x, y));
      if (op == "*") return PyValue(checked(mul, x, y));
      if (op == "//") return PyValue(floordiv(x, y));
      if (op == "%") return PyValue(pymod(x, y));
      if (op == "**") return int_pow(x, y);
    } else {
      const double x = as_float(a), y = as_float(b);
      if (op == "+") return PyValue(x + y);
      if (op == "-") return PyValue(x - y);
      if (op == "*") return PyValue(x * y);
      if (op == "//") {
        if (y == 0) fail("ZeroDivisionError: float floor division by zero");
        return PyValue(std::floor((x - pyfmod(x, y)) / y + 0.0));
      }
      if (op == "%") return PyValue(pyfmod(x, y));
      if (op == "**") {
        if (x == 0 && y < 0) fail("ZeroDivisionError: 0.0 cannot be raised to a negative power");
        if (x < 0 && y != std::floor(y)) fail("negative number raised to a fractional power gives a complex value");
        const double r = std::pow(x, y);
        if (std::isinf(r) && std::isfinite(x) && std::isfinite(y)) fail("OverflowError: (34, 'Numerical result out of range')");
        return PyValue(r);
      }
    }
    fail("TypeError: unsupported operand type(s) for " + op);
  }
  const bool seq_a = a.is_str() || a.is(PyType::list) || a.is(PyType::tuple);
  const bool seq_b = b.is_str() || b.is(PyType::list) || b.is(PyType::tuple);
  if (op == "+" && seq_a && a.type() == b.type()) {
    if (a.is_str()) return PyValue(a.str() + b.str());
    std::vector<PyValue> items = a.seq();
    items.insert(items.end(), b.seq().begin(), b.seq().end());
    if (a.is(PyType::tuple)) return PyValue(PyTuple{items});
    return PyValue(PyList{items});
  }
  if (op == "*" && seq_a && is_intlike(b)) return repeat(a, as_int(b));
  if (op == "*" && seq_b && is_intlike(a)) return repeat(b, as_int(a));
  fail(std::string("TypeError: unsupported operand type(s) for ") + op + ": '" + type_name(a.type()) + "' and '" +
       type_name(b.type()) + "'");
}

}  // namespace

PyValue py_eval(const PyNode& n) {
  switch (n.kind) {
    case PyNodeKind::constant:
      if (n.special == PyConstSpecial::bytes || n.special == PyConstSpecial::complex) {
        fail("bytes and complex values are not supported");
      }
      if (n.special == PyConstSpecial::ellipsis) fail("TypeError: unsupported operand type(s): 'ellipsis'");
      return n.value;
    case PyNodeKind::list:
    case PyNodeKind::tuple: {
      std::vector<PyValue> items;
      for (const auto& k : n.kids) {
        if (k.kind == PyNodeKind::starred) fail("starred expressions are not evaluated");
        items.push_back(py_eval(k));
      }
      if (n.kind == PyNodeKind::tuple) return PyValue(PyTuple{items});
      return PyValue(PyList{items});
    }
    case PyNodeKind::dict: {
      PyDict d;
      for (std::size_t i = 0; i + 1 < n.kids.size(); i += 2) {
        if (n.kids[i].kind == PyNodeKind::empty) fail("dict unpacking is not evaluated");
        PyValue key = py_eval(n.kids[i]);
        if (!py_hashable(key)) fail("TypeError: unhashable type: '" + std::string(type_name(key.type())) + "'");
        dict_set(d, std::move(key), py_eval(n.kids[i + 1]));
      }
      return PyValue(std::move(d));
    }
    case PyNodeKind::unary: {
      const PyValue v = py_eval(n.kids[0]);
      if (n.text == "not") {
        bool truthy = false;
        switch (v.type()) {
          case PyType::none: truthy = false; break;
          case PyType::boolean: truthy = std::get<bool>(v.v); break;
          case PyType::integer: truthy = std::get<std::int64_t>(v.v) != 0; break;
          case PyType::floating: truthy = std::get<double>(v.v) != 0; break;
          case PyType::string: truthy = !v.str().empty(); break;
          case PyType::list:
          case PyType::tuple: truthy = !v.seq().empty(); break;
          case PyType::dict: truthy = !v.dict().items.empty(); break;
          case PyType::other: truthy = true; break;
        }
        return PyValue(!truthy);
      }
      if (!is_num(v)) fail("TypeError: bad operand type for unary " + n.text + ": '" + type_name(v.type()) + "'");
      if (n.text == "~") {
        if (!is_intlike(v)) fail("TypeError: bad operand type for unary ~: 'float'");
        return PyValue(~as_int(v));
      }
      if (v.is(PyType::floating)) return PyValue(n.text == "-" ? -std::get<double>(v.v) : std::get<double>(v.v));
      const std::int64_t x = as_int(v);
      if (n.text == "+") return PyValue(x);
      if (x == std::numeric_limits<std::int64_t>::min()) fail("integer result outside the supported 64-bit range");
      return PyValue(-x);
    }
    case PyNodeKind::binop: return binop(n.text, py_eval(n.kids[0]), py_eval(n.kids[1]));
    case PyNodeKind::name: fail("NameError: name '" + n.text + "' is not defined");
    default: fail("expression is not evaluated: " + unparse(n));
  }
}

}  // namespace atlas::suites::bfcl
