#include "suites/bfcl/decode.hpp"

#include <limits>
#include <map>

#include "suites/bfcl/py_ast.hpp"

namespace atlas::suites::bfcl {

const char* to_string(OutputFormat f) {
  switch (f) {
    case OutputFormat::python: return "python";
    case OutputFormat::json: return "json";
    case OutputFormat::fc: return "fc";
  }
  return "?";
}

std::optional<OutputFormat> parse_output_format(std::string_view s) {
  if (s == "python") return OutputFormat::python;
  if (s == "json") return OutputFormat::json;
  if (s == "fc") return OutputFormat::fc;
  return std::nullopt;
}

namespace {

[[noreturn]] void fail(const std::string& what) { throw PyDecodeError(what); }

// default_decode_ast_prompting (MU:469-480): strip backtick, line feed and space from both ends
// (not CR, not tab), then make sure of a leading '[' and a trailing ']'. The later
// `.strip().strip("'")` in ast_parse can never remove anything from "[...]", so it is omitted.
std::string wrap_in_brackets(std::string_view text) {
  auto strip_char = [](char c) { return c == '`' || c == '\n' || c == ' '; };
  std::size_t b = 0, e = text.size();
  while (b < e && strip_char(text[b])) ++b;
  while (e > b && strip_char(text[e - 1])) --e;
  std::string s(text.substr(b, e - b));
  if (s.empty() || s.front() != '[') s.insert(s.begin(), '[');
  if (s.back() != ']') s.push_back(']');
  return s;
}

PyValue resolve(const PyNode& n);

// resolve_ast_call (MU:310-324): the name is the attribute chain down to a Name, parts that are
// not names dropped (spec §2.2 6); positional arguments are ignored; `**m` gives a None key; a
// repeated keyword keeps the last value.
PyValue resolve_call(const PyNode& call) {
  std::vector<std::string> parts;
  const PyNode* f = &call.kids[0];
  while (f->kind == PyNodeKind::attribute) {
    parts.push_back(f->text);
    f = &f->kids[0];
  }
  if (f->kind == PyNodeKind::name) parts.push_back(f->text);
  std::string name;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!name.empty() || it != parts.rbegin()) name += ".";
    name += *it;
  }
  PyDict args;
  const std::size_t nargs = call.call_nargs();
  for (std::size_t k = 0; k < call.kw_names.size(); ++k) {
    PyValue key = call.kw_names[k] ? PyValue(*call.kw_names[k]) : PyValue{};
    dict_set(args, std::move(key), resolve(call.kids[1 + nargs + k]));
  }
  PyDict out;
  out.items.emplace_back(PyValue(name), PyValue(std::move(args)));
  return PyValue(std::move(out));
}

// resolve_ast_by_type (MU:327-370).
PyValue resolve(const PyNode& n) {
  switch (n.kind) {
    case PyNodeKind::constant:
      if (n.special == PyConstSpecial::ellipsis) return PyValue(std::string("..."));
      if (n.special == PyConstSpecial::bytes) return PyValue(PyOther{"bytes", n.text});
      if (n.special == PyConstSpecial::complex) return PyValue(PyOther{"complex", n.text});
      return n.value;
    case PyNodeKind::unary: {
      // Upstream computes `-operand.value` whatever the operator (spec §2.2 7: `+3` -> -3,
      // `not True` -> -1); only a literal operand has a `.value` that negates.
      const PyNode& o = n.kids[0];
      if (o.kind == PyNodeKind::constant && o.special == PyConstSpecial::complex) return PyValue(PyOther{"complex", "(-" + o.text + ")"});
      if (o.kind != PyNodeKind::constant || o.special != PyConstSpecial::none) {
        fail("TypeError: bad operand type for unary -");
      }
      const PyValue& v = o.value;
      if (v.is(PyType::boolean)) return PyValue(std::int64_t{std::get<bool>(v.v) ? -1 : 0});
      if (v.is(PyType::integer)) {
        const auto x = std::get<std::int64_t>(v.v);
        if (x == std::numeric_limits<std::int64_t>::min()) fail("integer outside the supported 64-bit range");
        return PyValue(-x);
      }
      if (v.is(PyType::floating)) return PyValue(-std::get<double>(v.v));
      fail(std::string("TypeError: bad operand type for unary -: '") + type_name(v.type()) + "'");
    }
    case PyNodeKind::list: {
      PyList l;
      for (const auto& k : n.kids) l.items.push_back(resolve(k));
      return PyValue(std::move(l));
    }
    case PyNodeKind::tuple: {
      PyTuple t;
      for (const auto& k : n.kids) t.items.push_back(resolve(k));
      return PyValue(std::move(t));
    }
    case PyNodeKind::dict: {
      PyDict d;
      for (std::size_t i = 0; i + 1 < n.kids.size(); i += 2) {
        if (n.kids[i].kind == PyNodeKind::empty) fail("Unsupported AST type: NoneType (dict unpacking)");
        PyValue key = resolve(n.kids[i]);
        if (!py_hashable(key)) fail(std::string("TypeError: unhashable type: '") + type_name(key.type()) + "'");
        dict_set(d, std::move(key), resolve(n.kids[i + 1]));
      }
      return PyValue(std::move(d));
    }
    case PyNodeKind::binop: return py_eval(n);  // eval(ast.unparse(value))
    case PyNodeKind::name: return PyValue(n.text);
    case PyNodeKind::call:
      if (n.kw_names.empty()) return PyValue(unparse(n));
      return resolve_call(n);
    case PyNodeKind::subscript: return PyValue(unparse(n.kids[0]) + "[" + unparse(n.kids[1]) + "]");
    default: fail("Unsupported AST type: " + unparse(n));
  }
}

bool is_py_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || (c >= 0x1c && c <= 0x1f);
}

// re.search(r"\[\s*{.*?}\s*(?:,\s*{.*?}\s*)*\]", s, re.DOTALL) (JP:6), matched in the order a
// backtracking engine tries alternatives: leftmost '[', then the shortest '{...}' first, the
// group repeated greedily before trying ']'. Returns [start, end) of the match.
class JsonArraySpan {
 public:
  explicit JsonArraySpan(std::string_view s) : s_(s) {}

  std::optional<std::pair<std::size_t, std::size_t>> find() {
    for (std::size_t start = 0; start < s_.size(); ++start) {
      if (s_[start] != '[') continue;
      const std::size_t q = skip_ws(start + 1);
      if (q >= s_.size() || s_[q] != '{') continue;
      for (std::size_t e = q + 1; e < s_.size(); ++e) {
        if (s_[e] != '}') continue;
        if (auto end = tail(e + 1)) return std::make_pair(start, *end);
      }
    }
    return std::nullopt;
  }

 private:
  std::string_view s_;
  std::map<std::size_t, std::optional<std::size_t>> memo_;

  std::size_t skip_ws(std::size_t p) const {
    while (p < s_.size() && is_py_space(s_[p])) ++p;
    return p;
  }

  // After a '}' at pos-1: \s* (?:,\s*{.*?}\s*)* \]
  std::optional<std::size_t> tail(std::size_t pos) {
    if (auto it = memo_.find(pos); it != memo_.end()) return it->second;
    std::optional<std::size_t> result;
    const std::size_t p = skip_ws(pos);
    if (p < s_.size() && s_[p] == ',') {
      const std::size_t q = skip_ws(p + 1);
      if (q < s_.size() && s_[q] == '{') {
        for (std::size_t e = q + 1; e < s_.size() && !result; ++e) {
          if (s_[e] == '}') result = tail(e + 1);
        }
      }
    }
    if (!result && p < s_.size() && s_[p] == ']') result = p + 1;
    memo_[pos] = result;
    return result;
  }
};

}  // namespace

PyValue decode_python(std::string_view text) {
  const std::string src = wrap_in_brackets(text);
  PyNode body;
  try {
    body = parse_python_expression(src);
  } catch (const PySyntaxError& e) {
    throw PyDecodeError(std::string("SyntaxError: ") + e.what());
  }
  PyList calls;
  if (body.kind == PyNodeKind::call) {
    calls.items.push_back(resolve_call(body));
  } else if (body.kind == PyNodeKind::list || body.kind == PyNodeKind::tuple || body.kind == PyNodeKind::set) {
    for (const auto& elem : body.kids) {
      if (elem.kind != PyNodeKind::call) fail("AssertionError: element is not a function call: " + unparse(elem));
      calls.items.push_back(resolve_call(elem));
    }
  } else {
    fail("AttributeError: the expression is not a list of calls");
  }
  return PyValue(std::move(calls));
}

PyValue decode_json_format(std::string_view text) {
  std::string src = wrap_in_brackets(text);
  // ast_parse's r"\[.*\]" (DOTALL, greedy): first '[' to last ']' - the whole wrapped text.
  if (auto span = JsonArraySpan(src).find()) src = src.substr(span->first, span->second - span->first);
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(src);
  } catch (const nlohmann::json::exception&) {
    return PyValue(PyList{});  // JSONDecodeError -> [] (JP:11-13)
  }
  PyList calls;
  auto handle = [&](const nlohmann::ordered_json& elem) {
    if (!elem.is_object()) return;  // non-dict elements are skipped
    if (!elem.contains("function")) fail("KeyError: 'function'");
    if (!elem.contains("parameters")) fail("KeyError: 'parameters'");
    PyValue name = from_json(elem["function"]);
    if (!py_hashable(name)) fail(std::string("TypeError: unhashable type: '") + type_name(name.type()) + "'");
    PyDict call;
    call.items.emplace_back(std::move(name), from_json(elem["parameters"]));
    calls.items.push_back(PyValue(std::move(call)));
  };
  if (j.is_array()) {
    for (const auto& elem : j) handle(elem);
  } else if (j.is_object() || j.is_string()) {
    // Iterating a dict yields its keys, a str its characters: never dicts, all skipped.
  } else {
    fail("TypeError: the decoded JSON is not iterable");
  }
  return PyValue(std::move(calls));
}

PyValue decode_fc(const nlohmann::ordered_json& result) {
  PyList calls;
  if (result.is_string()) {
    // The model answered with text: iterating it gives characters, which have no .keys().
    if (!result.get<std::string>().empty()) fail("AttributeError: 'str' object has no attribute 'keys'");
    return PyValue(std::move(calls));
  }
  if (result.is_object()) {
    if (!result.empty()) fail("AttributeError: 'str' object has no attribute 'keys'");
    return PyValue(std::move(calls));
  }
  if (!result.is_array()) fail("TypeError: the result is not iterable");
  for (const auto& elem : result) {
    if (!elem.is_object()) fail("AttributeError: a tool call is not an object");
    if (elem.empty()) fail("IndexError: a tool call has no name");
    const auto it = elem.begin();
    if (!it.value().is_string()) fail("TypeError: the JSON object must be str, not " + std::string(it.value().type_name()));
    nlohmann::ordered_json args;
    try {
      args = nlohmann::ordered_json::parse(it.value().get<std::string>());
    } catch (const nlohmann::json::exception& e) {
      fail(std::string("JSONDecodeError: ") + e.what());
    }
    PyDict call;
    call.items.emplace_back(PyValue(it.key()), from_json(args));
    calls.items.push_back(PyValue(std::move(call)));
  }
  return PyValue(std::move(calls));
}

std::optional<std::vector<DecodedCall>> as_calls(const PyValue& decoded) {
  if (!decoded.is(PyType::list)) return std::nullopt;
  std::vector<DecodedCall> calls;
  for (const auto& elem : decoded.list().items) {
    if (!elem.is(PyType::dict) || elem.dict().items.size() != 1) return std::nullopt;
    const auto& [name, args] = elem.dict().items.front();
    if (!args.is(PyType::dict)) return std::nullopt;
    calls.push_back(DecodedCall{name, args.dict()});
  }
  return calls;
}

bool is_empty_output(const PyValue& decoded) {
  if (!decoded.is(PyType::list)) return false;
  const auto& items = decoded.list().items;
  if (items.empty()) return true;
  return items.size() == 1 && items[0].is(PyType::dict) && items[0].dict().items.empty();
}

}  // namespace atlas::suites::bfcl
