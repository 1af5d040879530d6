#include "suites/bfcl/checker.hpp"

#include <optional>

namespace atlas::suites::bfcl {

namespace {

CheckResult ok() { return {}; }
CheckResult err(std::string type, std::string msg) { return CheckResult{false, std::move(type), std::move(msg)}; }

// PYTHON_TYPE_MAPPING (AC:14-23): tuple -> list, any -> str.
PyType python_type(const std::string& schema_type) {
  if (schema_type == "string" || schema_type == "any") return PyType::string;
  if (schema_type == "integer") return PyType::integer;
  if (schema_type == "float") return PyType::floating;
  if (schema_type == "boolean") return PyType::boolean;
  if (schema_type == "dict") return PyType::dict;
  return PyType::list;  // array, tuple (the loader admits no other types)
}

bool is_empty_str(const PyValue& v) { return v.is_str() && v.str().empty(); }

// Python `"" in acceptable` where acceptable is normally a list (a str: substring test).
bool allows_omission(const PyValue& acceptable) {
  if (acceptable.is_str()) return true;
  if (acceptable.is(PyType::list) || acceptable.is(PyType::tuple)) return py_contains(acceptable.seq(), PyValue(""));
  return false;
}
bool allows_omission(const std::vector<PyValue>& acceptable) { return py_contains(acceptable, PyValue("")); }

// Python iteration of an acceptable-values container: a list's items, a str's characters.
std::vector<PyValue> iterate(const PyValue& v) {
  if (v.is(PyType::list) || v.is(PyType::tuple)) return v.seq();
  std::vector<PyValue> out;
  if (v.is_str()) {
    const std::string& s = v.str();
    for (std::size_t i = 0; i < s.size();) {
      std::size_t len = 1;
      const auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0xF0) len = 4; else if (c >= 0xE0) len = 3; else if (c >= 0xC0) len = 2;
      out.emplace_back(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

struct TypeCheck {
  bool valid = true;
  bool is_variable = false;
  std::string error_type;
};

// get_possible_answer_type (AC:76-80): the type of the first acceptable value that is not "".
std::optional<PyType> possible_answer_type(const std::vector<PyValue>& acceptable) {
  for (const auto& a : acceptable) {
    if (!is_empty_str(a)) return a.type();
  }
  return std::nullopt;
}

// type_checker (AC:93-171, spec §5.1).
TypeCheck type_checker(const PyValue& value, const std::vector<PyValue>& acceptable, PyType expected,
                       std::optional<PyType> nested) {
  const auto pt = possible_answer_type(acceptable);
  const bool is_variable = pt && *pt != expected;
  TypeCheck r;
  r.error_type = "type_error:simple";
  if (value.type() == expected) {
    if (!nested) {
      r.is_variable = is_variable;
      return r;
    }
    for (const auto& alternative : acceptable) {
      bool flag = true;  // a non-list alternative (typically "") passes at once
      if (alternative.is(PyType::list)) {
        for (const auto& item : value.seq()) {
          if (!type_checker(item, alternative.list().items, *nested, std::nullopt).valid) {
            flag = false;
            break;
          }
        }
      }
      if (flag) return TypeCheck{true, is_variable, ""};
    }
    r.valid = false;
    r.error_type = "type_error:nested";
    // quirk (§5.1): falls through to the variable rule below, which keeps "nested" only when the
    // value's type equals the ground truth's type.
  }
  if (pt && value.type() == *pt) {
    r.is_variable = true;
    return r;
  }
  r.valid = false;
  r.error_type = "type_error:simple";
  return r;
}

void lower_utf8(std::string& out, std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += static_cast<char>(std::tolower(c));
      ++i;
      continue;
    }
    std::size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (i + len > s.size()) len = s.size() - i;
    unsigned cp = len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    // str.lower() for the scripts seen in BFCL data: Latin-1, Latin Extended-A, Greek, Cyrillic.
    unsigned lower = cp;
    if ((cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) || (cp >= 0x391 && cp <= 0x3AB && cp != 0x3A2) ||
        (cp >= 0x410 && cp <= 0x42F)) {
      lower = cp + 0x20;
    } else if (cp >= 0x400 && cp <= 0x40F) {
      lower = cp + 0x50;
    } else if (cp >= 0x100 && cp <= 0x17F && cp != 0x130 && cp != 0x138 && cp != 0x149) {
      const bool odd_upper = (cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E);
      if (cp == 0x178) lower = 0xFF;
      else if (odd_upper ? (cp % 2 == 1) : (cp % 2 == 0)) lower = cp + 1;
    }
    if (lower == cp || len < 2) {
      out.append(s.substr(i, len));
    } else {
      if (lower < 0x800) {
        out += static_cast<char>(0xC0 | (lower >> 6));
        out += static_cast<char>(0x80 | (lower & 0x3F));
      } else {
        out += static_cast<char>(0xE0 | (lower >> 12));
        out += static_cast<char>(0x80 | ((lower >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (lower & 0x3F));
      }
    }
    i += len;
  }
}

PyValue standardize_if_str(const PyValue& v) { return v.is_str() ? PyValue(standardize_string(v.str())) : v; }

// string_checker (AC:174-201, spec §5.2).
CheckResult string_checker(const std::string& param, const std::string& value, const std::vector<PyValue>& acceptable) {
  const std::string norm = standardize_string(value);
  for (const auto& a : acceptable) {
    if (a.is_str() && standardize_string(a.str()) == norm) return ok();
  }
  return err("value_error:string", "Invalid value for parameter '" + param + "': " + py_repr_str(value) +
                                       ". Expected one of " + py_repr(PyValue(PyList{acceptable})) + ". Case insensitive.");
}

// list_checker (AC:204-235, spec §5.5).
CheckResult list_checker(const std::string& param, const PyValue& value, const std::vector<PyValue>& acceptable) {
  PyList norm;
  for (const auto& item : value.seq()) norm.items.push_back(standardize_if_str(item));
  const PyValue normalized(norm);
  for (const auto& alternative : acceptable) {
    // quirk (§5.5): every alternative is iterated - "" gives [], a string its characters.
    if (!alternative.is_str() && !alternative.is(PyType::list) && !alternative.is(PyType::tuple)) continue;
    PyList alt;
    for (const auto& item : iterate(alternative)) alt.items.push_back(standardize_if_str(item));
    if (py_equal(normalized, PyValue(alt))) return ok();
  }
  return err("value_error:list/tuple", "Invalid value for parameter '" + param + "': " + py_repr(value) +
                                           ". Expected one of " + py_repr(PyValue(PyList{acceptable})) + ".");
}

// dict_checker (AC:238-298, spec §5.3).
CheckResult dict_checker(const std::string& param, const PyValue& value, const std::vector<PyValue>& alternatives) {
  CheckResult result = err("dict_checker:unclear", "");
  for (const auto& alternative : alternatives) {
    if (is_empty_str(alternative)) continue;
    result = err("dict_checker:unclear", "");
    if (!value.is(PyType::dict) || !alternative.is(PyType::dict)) {
      // Upstream raises here (a non-dict inside a list of dicts); count it as a wrong value.
      result = err("value_error:dict_value", "Parameter '" + param + "': " + py_repr(value) + " is not a dict.");
      continue;
    }
    const PyDict& alt = alternative.dict();
    bool flag = true;
    for (const auto& [key, v] : value.dict().items) {
      const PyValue* acc = dict_find(alt, key);
      if (!acc) {
        result = err("value_error:dict_key", "Unexpected dict key parameter: " + py_repr(key) + ".");
        flag = false;
        break;
      }
      const PyValue norm = standardize_if_str(v);
      bool found = false;
      for (const auto& a : iterate(*acc)) found |= py_equal(norm, standardize_if_str(a));
      if (!found) {
        result = err("value_error:dict_value", "Invalid value for parameter " + py_repr(key) + ": " + py_repr(v) + ".");
        flag = false;
        break;
      }
    }
    // quirk (§5.3): the missing-key pass runs even after a failure above and may overwrite it.
    for (const auto& [key, acc] : alt.items) {
      if (!dict_find(value.dict(), key) && !allows_omission(acc)) {
        result = err("value_error:dict_key", "Missing dict key parameter: " + py_repr(key) + ".");
        flag = false;
        break;
      }
    }
    if (flag) return ok();
  }
  return result;
}

// list_dict_checker (AC:301-330, spec §5.4).
CheckResult list_dict_checker(const std::string& param, const PyValue& value, const std::vector<PyValue>& alternatives) {
  CheckResult result = err("list_dict_checker:unclear", "");
  const auto& items = value.seq();
  for (const auto& alternative : alternatives) {
    const std::vector<PyValue> alt = iterate(alternative);  // "" has length 0
    if (items.size() != alt.size() || !(alternative.is(PyType::list) || is_empty_str(alternative))) {
      result = err("value_error:list_dict_count", "Wrong number of dictionaries in the list.");
      continue;
    }
    bool flag = true;
    for (std::size_t i = 0; i < items.size(); ++i) {
      result = dict_checker(param, items[i], {alt[i]});
      if (!result.valid) {
        flag = false;
        break;
      }
    }
    if (flag) return ok();
  }
  return result;
}

std::string expected_name(const FunctionSchema& schema, bool underscore_to_dot) {
  std::string name = schema.name;
  if (underscore_to_dot) {
    for (char& c : name) {
      if (c == '.') c = '_';
    }
  }
  return name;
}

const FunctionSchema* find_description(const std::vector<FunctionSchema>& functions, const std::string& name) {
  for (const auto& f : functions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

}  // namespace

std::string standardize_string(std::string_view s) {
  std::string kept;
  for (char c : s) {
    switch (c) {
      case ' ': case ',': case '.': case '/': case '-': case '_': case '*': case '^': break;
      default: kept += c;
    }
  }
  std::string out;
  lower_utf8(out, kept);
  for (char& c : out) {
    if (c == '\'') c = '"';
  }
  return out;
}

CheckResult check_single_call(const FunctionSchema& schema, const DecodedCall& call, const GroundTruthCall& gt,
                              bool underscore_to_dot) {
  // 1. Function name (AC:353-362): exact and case-sensitive.
  const std::string fname = expected_name(schema, underscore_to_dot);
  if (!py_equal(call.name, PyValue(fname))) {
    return err("simple_function_checker:wrong_func_name", "Function name '" + fname + "' not found in model output.");
  }
  // 2. Required parameters (AC:367-372).
  for (const auto& r : schema.required) {
    if (!dict_find(call.args, PyValue(r))) {
      return err("simple_function_checker:missing_required", "Missing required parameter: '" + r + "'.");
    }
  }
  // 3. Each output argument in output order (AC:375-503).
  for (const auto& [key, raw_value] : call.args.items) {
    const ParamSchema* ps = key.is_str() ? schema.find(key.str()) : nullptr;
    const std::vector<PyValue>* acceptable = key.is_str() ? gt.find(key.str()) : nullptr;
    if (!ps || !acceptable) {
      return err("simple_function_checker:unexpected_param", "Unexpected parameter: " + py_repr(key) + ".");
    }
    const std::string& param = key.str();
    const PyType expected = python_type(ps->type);
    std::optional<PyType> nested;
    if (ps->type == "array" || ps->type == "tuple") nested = python_type(ps->item_type);

    PyValue value = raw_value;
    if (ps->type == "tuple" && value.is(PyType::tuple)) value = PyValue(PyList{value.tuple().items});  // AC:439-440
    if (ps->type == "float" && value.is(PyType::integer)) {
      value = PyValue(static_cast<double>(std::get<std::int64_t>(value.v)));  // AC:443-448, top level only
    }

    const TypeCheck tc = type_checker(value, *acceptable, expected, nested);
    if (!tc.valid) {
      return err(tc.error_type, "Incorrect type for parameter '" + param + "'. Expected type " + ps->type + ", got " +
                                    type_name_of(value) + ". Parameter value: " + py_repr(value) + ".");
    }
    if (!tc.is_variable) {
      if (expected == PyType::dict) {
        if (auto r = dict_checker(param, value, *acceptable); !r.valid) return r;
        continue;
      }
      if (expected == PyType::list && nested == PyType::dict) {
        if (auto r = list_dict_checker(param, value, *acceptable); !r.valid) return r;
        continue;
      }
      if (expected == PyType::string) {
        if (auto r = string_checker(param, value.str(), *acceptable); !r.valid) return r;
        continue;
      }
      if (expected == PyType::list) {
        if (auto r = list_checker(param, value, *acceptable); !r.valid) return r;
        continue;
      }
    }
    if (!py_contains(*acceptable, value)) {
      return err("value_error:others", "Invalid value for parameter '" + param + "': " + py_repr(value) +
                                           ". Expected one of " + py_repr(PyValue(PyList{*acceptable})) + ".");
    }
  }
  // 4. Ground-truth parameters left out must allow "" (AC:506-513).
  for (const auto& [param, acceptable] : gt.params) {
    if (!dict_find(call.args, PyValue(param)) && !allows_omission(acceptable)) {
      return err("simple_function_checker:missing_optional",
                 "Optional parameter '" + param + "' not provided and not marked as optional.");
    }
  }
  return ok();
}

CheckResult check_ast(std::string_view category, const std::vector<FunctionSchema>& functions,
                      const std::vector<DecodedCall>& calls, const std::vector<GroundTruthCall>& gt,
                      bool underscore_to_dot) {
  if (category.find("parallel") != std::string_view::npos) {
    // parallel_function_checker_no_order (AC:554-620, spec §4): greedy, not a maximum matching.
    if (calls.size() != gt.size()) {
      return err("parallel_function_checker_no_order:wrong_count", "Wrong number of functions.");
    }
    std::vector<bool> claimed(calls.size(), false);
    for (std::size_t i = 0; i < gt.size(); ++i) {
      const FunctionSchema* schema = find_description(functions, gt[i].name);
      bool matched = false;
      for (std::size_t k = 0; k < calls.size() && schema; ++k) {
        if (claimed[k]) continue;
        if (check_single_call(*schema, calls[k], gt[i], underscore_to_dot).valid) {
          claimed[k] = true;
          matched = true;
          break;
        }
      }
      if (!matched) {
        return err("parallel_function_checker_no_order:cannot_find_match",
                   "Could not find a matching function among the model output for index " + std::to_string(i) +
                       " of possible answers.");
      }
    }
    return ok();
  }
  if (category.find("multiple") != std::string_view::npos) {
    // multiple_function_checker (AC:623-646, spec §3).
    if (calls.size() != gt.size()) return err("multiple_function_checker:wrong_count", "Wrong number of functions.");
    const FunctionSchema* schema = find_description(functions, gt[0].name);
    if (!schema) return err("simple_function_checker:wrong_func_name", "Ground-truth function not in the menu.");
    return check_single_call(*schema, calls[0], gt[0], underscore_to_dot);
  }
  // simple (AC:47-61): exactly one call, checked against the first function of the menu.
  if (calls.size() != 1) return err("simple_function_checker:wrong_count", "Wrong number of functions.");
  return check_single_call(functions.at(0), calls[0], gt.at(0), underscore_to_dot);
}

}  // namespace atlas::suites::bfcl
