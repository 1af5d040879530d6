#pragma once
// The Python values BFCL's checker compares: what `ast` decoding of a model's output and
// `json.load` of the ground truth produce (None, bool, int, float, str, list, tuple, dict).
// Equality follows Python's `==` (5 == 5.0, True == 1, [1] != (1,)), because the checker's
// membership tests (`value in possible_answers`) use it (docs/bfcl.md, spec §5).
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace atlas::suites::bfcl {

struct PyValue;

struct PyNone {};
struct PyList { std::vector<PyValue> items; };
struct PyTuple { std::vector<PyValue> items; };
/// Insertion-ordered; keys are unique under Python equality (1, 1.0 and True are one key).
struct PyDict { std::vector<std::pair<PyValue, PyValue>> items; };
/// A value the checker only needs to tell apart (bytes, complex): its Python type name and
/// repr. It never matches a schema type, and equals only an identical value.
struct PyOther {
  std::string type;
  std::string repr;
};

enum class PyType { none, boolean, integer, floating, string, list, tuple, dict, other };
const char* type_name(PyType t);  ///< Python's name: "NoneType", "bool", "int", "float", ...
/// The Python type name of `v` ("bytes" / "complex" for PyOther).
std::string type_name_of(const PyValue& v);

struct PyValue {
  std::variant<PyNone, bool, std::int64_t, double, std::string, PyList, PyTuple, PyDict, PyOther> v;

  PyValue() : v(PyNone{}) {}
  PyValue(PyNone) : v(PyNone{}) {}
  PyValue(bool b) : v(b) {}
  PyValue(int i) : v(static_cast<std::int64_t>(i)) {}
  PyValue(std::int64_t i) : v(i) {}
  PyValue(double d) : v(d) {}
  PyValue(std::string s) : v(std::move(s)) {}
  PyValue(const char* s) : v(std::string(s)) {}
  PyValue(PyList l) : v(std::move(l)) {}
  PyValue(PyTuple t) : v(std::move(t)) {}
  PyValue(PyDict d) : v(std::move(d)) {}
  PyValue(PyOther o) : v(std::move(o)) {}

  PyType type() const { return static_cast<PyType>(v.index()); }
  bool is(PyType t) const { return type() == t; }
  bool is_str() const { return is(PyType::string); }
  const std::string& str() const { return std::get<std::string>(v); }
  const PyList& list() const { return std::get<PyList>(v); }
  const PyTuple& tuple() const { return std::get<PyTuple>(v); }
  const PyDict& dict() const { return std::get<PyDict>(v); }
  PyDict& dict() { return std::get<PyDict>(v); }
  /// The items of a list or tuple.
  const std::vector<PyValue>& seq() const;
};

/// Python `a == b`.
bool py_equal(const PyValue& a, const PyValue& b);
/// Python `v in items` (by ==).
bool py_contains(const std::vector<PyValue>& items, const PyValue& v);
/// Whether `v` may be a dict key (Python: hashable; lists and dicts are not).
bool py_hashable(const PyValue& v);
/// Python `d[key] = value`: replaces the value of an equal key (keeping its position) or appends.
void dict_set(PyDict& d, PyValue key, PyValue value);
/// Python `d.get(key)`; nullptr when absent.
const PyValue* dict_find(const PyDict& d, const PyValue& key);

/// Python `repr(v)` (strings quoted the way CPython chooses, floats shortest round-trip).
std::string py_repr(const PyValue& v);
std::string py_repr_str(std::string_view utf8);
std::string py_repr_float(double d);

/// JSON as Python's `json.loads` returns it: integers -> int, numbers with a fraction or exponent
/// -> float, arrays -> list, objects -> dict (key order kept when `j` is ordered).
PyValue from_json(const nlohmann::ordered_json& j);
/// The inverse, for reports: tuples become arrays, non-string dict keys their repr.
nlohmann::ordered_json to_json(const PyValue& v);

}  // namespace atlas::suites::bfcl
