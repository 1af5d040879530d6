// The Python expression subset BFCL's prompt decoder relies on (spec §2.2).
#include <doctest/doctest.h>

#include <cmath>

#include "suites/bfcl/decode.hpp"
#include "suites/bfcl/py_ast.hpp"

using namespace atlas::suites::bfcl;

namespace {

// The value of argument `p` of the first decoded call.
PyValue arg(const std::string& text, const std::string& p = "v") {
  const PyValue decoded = decode_python(text);
  const auto calls = as_calls(decoded);
  REQUIRE(calls.has_value());
  REQUIRE(!calls->empty());
  const PyValue* v = dict_find(calls->front().args, PyValue(p));
  REQUIRE(v != nullptr);
  return *v;
}

PyValue v_of(const std::string& expr) { return arg("[f(v=" + expr + ")]"); }

bool fails(const std::string& text) {
  try {
    decode_python(text);
    return false;
  } catch (const PyDecodeError&) {
    return true;
  }
}

}  // namespace

TEST_CASE("bfcl parser: string literals") {
  CHECK(v_of("'abc'").str() == "abc");
  CHECK(v_of("\"abc\"").str() == "abc");
  CHECK(v_of(R"('it\'s')").str() == "it's");
  CHECK(v_of(R"("a\nb\tc\\d")").str() == "a\nb\tc\\d");
  CHECK(v_of(R"('\x41\u00e9\101')").str() == "A\xC3\xA9" "A");
  CHECK(v_of(R"(r'a\nb')").str() == "a\\nb");
  CHECK(v_of(R"('\d')").str() == "\\d");  // unknown escape keeps the backslash
  CHECK(v_of("'a' \"b\"").str() == "ab");  // adjacent literals concatenate
  CHECK(v_of("'''x'y'''").str() == "x'y");
  CHECK(v_of("'caf\xC3\xA9'").str() == "caf\xC3\xA9");
  CHECK(v_of("...").str() == "...");
  CHECK(fails("[f(v='abc)]"));
  CHECK(fails("[f(v='a\nb')]"));
  CHECK(fails("[f(v=f'{x}')]"));   // f-string
  CHECK(type_name_of(v_of("b'x'")) == "bytes");  // a bytes value: fails any type check
  CHECK(!py_equal(v_of("b'x'"), PyValue("x")));
  CHECK(fails("[f(v='a' b'x')]"));  // str and bytes cannot mix
  CHECK(fails(R"([f(v='\x4')])"));   // truncated \x escape
}

TEST_CASE("bfcl parser: numbers, booleans, None") {
  CHECK(std::get<std::int64_t>(v_of("42").v) == 42);
  CHECK(std::get<std::int64_t>(v_of("-42").v) == -42);
  CHECK(std::get<std::int64_t>(v_of("1_000").v) == 1000);
  CHECK(std::get<std::int64_t>(v_of("0x1F").v) == 31);
  CHECK(std::get<std::int64_t>(v_of("0o17").v) == 15);
  CHECK(std::get<std::int64_t>(v_of("0b101").v) == 5);
  CHECK(std::get<double>(v_of("1.5").v) == 1.5);
  CHECK(std::get<double>(v_of(".5").v) == 0.5);
  CHECK(std::get<double>(v_of("5.").v) == 5.0);
  CHECK(std::get<double>(v_of("1e-3").v) == 0.001);
  CHECK(std::get<double>(v_of("-2.5E2").v) == -250.0);
  CHECK(std::isinf(std::get<double>(v_of("1e999").v)));
  CHECK(std::get<bool>(v_of("True").v) == true);
  CHECK(std::get<bool>(v_of("False").v) == false);
  CHECK(v_of("None").is(PyType::none));
  CHECK(v_of("true").str() == "true");   // bare identifiers are strings
  CHECK(v_of("null").str() == "null");
  CHECK(fails("[f(v=007)]"));   // leading zeros
  CHECK(fails("[f(v=1_)]"));
  CHECK(fails("[f(v=12abc)]"));
  CHECK(type_name_of(v_of("1j")) == "complex");
  CHECK(type_name_of(v_of("-1j")) == "complex");
}

TEST_CASE("bfcl parser: unary quirk and binary evaluation (spec §2.2 7)") {
  CHECK(std::get<std::int64_t>(v_of("+3").v) == -3);    // any unary operator negates
  CHECK(std::get<std::int64_t>(v_of("not True").v) == -1);
  CHECK(std::get<std::int64_t>(v_of("~5").v) == -5);
  CHECK(std::get<std::int64_t>(v_of("2*5").v) == 10);
  CHECK(std::get<double>(v_of("10**-2").v) == doctest::Approx(0.01));
  CHECK(std::get<double>(v_of("7/2").v) == 3.5);
  CHECK(std::get<std::int64_t>(v_of("-7//2").v) == -4);
  CHECK(std::get<std::int64_t>(v_of("-7%3").v) == 2);
  CHECK(std::get<std::int64_t>(v_of("2**10").v) == 1024);
  CHECK(std::get<std::int64_t>(v_of("(1+2)*3").v) == 9);
  CHECK(std::get<std::int64_t>(v_of("2*+3").v) == 6);  // inside eval, real Python semantics
  CHECK(v_of("'a'+'b'").str() == "ab");
  CHECK(v_of("'ab'*2").str() == "abab");
  CHECK(py_equal(v_of("[1]+[2]"), PyValue(PyList{{PyValue(1), PyValue(2)}})));
  CHECK(fails("[f(v=--3)]"));     // operand of the negation is not a literal
  CHECK(fails("[f(v=-'a')]"));
  CHECK(fails("[f(v=1/0)]"));     // ZeroDivisionError
  CHECK(fails("[f(v=x+1)]"));     // NameError
  CHECK(fails("[f(v='a'-'b')]"));  // TypeError
}

TEST_CASE("bfcl parser: containers and nested calls") {
  const PyValue l = v_of("[1, 'a', [2.5, None]]");
  REQUIRE(l.is(PyType::list));
  CHECK(l.list().items.size() == 3);
  CHECK(l.list().items[2].is(PyType::list));
  const PyValue t = v_of("(1, 2)");
  CHECK(t.is(PyType::tuple));
  CHECK(v_of("(1,)").is(PyType::tuple));
  CHECK(std::get<std::int64_t>(v_of("(1)").v) == 1);
  CHECK(v_of("()").is(PyType::tuple));
  const PyValue d = v_of("{'a': 1, 'b': [True], 'a': 2}");
  REQUIRE(d.is(PyType::dict));
  CHECK(d.dict().items.size() == 2);
  CHECK(std::get<std::int64_t>(dict_find(d.dict(), PyValue("a"))->v) == 2);  // later key wins
  // A call with keywords becomes {name: {kw: value}}; without keywords its source text.
  const PyValue nested = v_of("g.h(x=1, y='z')");
  REQUIRE(nested.is(PyType::dict));
  CHECK(nested.dict().items[0].first.str() == "g.h");
  CHECK(v_of("math.sqrt(25)").str() == "math.sqrt(25)");
  CHECK(v_of("f( 'a' ,2 )").str() == "f('a', 2)");
  CHECK(v_of("a[0]").str() == "a[0]");
  CHECK(v_of("a['k']").str() == "a['k']");
  CHECK(fails("[f(v={1, 2})]"));          // set
  CHECK(fails("[f(v=a < b)]"));           // comparison
  CHECK(fails("[f(v=a and b)]"));         // boolean operator
  CHECK(fails("[f(v=a if b else c)]"));   // conditional expression
  CHECK(fails("[f(v=[x for x in y])]"));  // comprehension
  CHECK(fails("[f(v={**m})]"));           // dict unpacking
  CHECK(fails("[f(v={[1]: 2})]"));        // unhashable key
}

TEST_CASE("bfcl parser: call names and top-level shapes (spec §2.2 5-6)") {
  auto names = [](const std::string& text) {
    std::vector<std::string> out;
    const auto calls = as_calls(decode_python(text));
    REQUIRE(calls.has_value());
    for (const auto& c : *calls) out.push_back(c.name.str());
    return out;
  };
  CHECK(names("[a.b.c(x=1)]") == std::vector<std::string>{"a.b.c"});
  CHECK(names("[f(x=1), g(y=2)]") == std::vector<std::string>{"f", "g"});
  CHECK(names("f(x=1), g(y=2)") == std::vector<std::string>{"f", "g"});
  CHECK(names("[a[0].f(x=1)]") == std::vector<std::string>{"f"});   // non-name parts dropped
  CHECK(names("[f()(x=1)]") == std::vector<std::string>{""});       // can give an empty name
  CHECK(names("[f(x=1)  # a comment\n]") == std::vector<std::string>{"f"});
  CHECK(names("[f(x=1)  # a comment\r\n]") == std::vector<std::string>{"f"});
  CHECK(fails("[]#+\r"));  // a lone CR ends the comment: the appended ']' is unmatched
  CHECK(names("[f(\n  x=1,\n)]") == std::vector<std::string>{"f"});
  CHECK(decode_python("[]").list().items.empty());
  CHECK(fails("[(f(x=1), g(y=1))]"));   // a nested tuple of calls
  CHECK(fails("[f(x=1)] [g(y=1)]"));    // subscript of a list by a list -> not a list of calls
  CHECK(fails("[f(x=1), 5]"));
  CHECK(fails("[f(x=1, 2)]"));          // positional after keyword: SyntaxError
  CHECK(fails("[f(class=1)]"));
  CHECK(fails("[f(x=1)]]"));
  CHECK(names("[f(x=1)") == std::vector<std::string>{"f"});  // step 2 closes the list
}

TEST_CASE("bfcl parser: unparse follows ast.unparse layout") {
  CHECK(unparse(parse_python_expression("f(1,2 , k = 'v')")) == "f(1, 2, k='v')");
  CHECK(unparse(parse_python_expression("(a+b)*c")) == "(a + b) * c");
  CHECK(unparse(parse_python_expression("-x ** 2")) == "-x ** 2");
  CHECK(unparse(parse_python_expression("(-x) ** 2")) == "(-x) ** 2");
  CHECK(unparse(parse_python_expression("1, 2")) == "(1, 2)");
  CHECK(unparse(parse_python_expression("{'a': [1.50, None]}")) == "{'a': [1.5, None]}");
  CHECK(unparse(parse_python_expression("a[1:2]")) == "a[1:2]");
  CHECK(unparse(parse_python_expression("\"it's\"")) == "\"it's\"");
  // ast.unparse(ast.parse("1 .f")) == "1 .f": without the space, "1.f" does not parse again.
  CHECK(unparse(parse_python_expression("1 .f")) == "1 .f");
  CHECK(unparse(parse_python_expression("(1).real")) == "1 .real");
  CHECK(unparse(parse_python_expression("True .x")) == "True .x");
  CHECK(unparse(parse_python_expression("1.5 .x")) == "1.5.x");
  CHECK(unparse(parse_python_expression("'s'.x")) == "'s'.x");
}

TEST_CASE("bfcl values: Python equality and repr") {
  CHECK(py_equal(PyValue(5), PyValue(5.0)));
  CHECK(py_equal(PyValue(true), PyValue(1)));
  CHECK(!py_equal(PyValue(PyList{{PyValue(1)}}), PyValue(PyTuple{{PyValue(1)}})));
  CHECK(!py_equal(PyValue("5"), PyValue(5)));
  CHECK(py_repr_float(0.01) == "0.01");
  CHECK(py_repr_float(1e-05) == "1e-05");
  CHECK(py_repr_float(1e16) == "1e+16");
  CHECK(py_repr_float(123456789012345.0) == "123456789012345.0");
  CHECK(py_repr_float(2.5) == "2.5");
  CHECK(py_repr(PyValue("it's")) == "\"it's\"");
  CHECK(py_repr(PyValue(PyTuple{{PyValue(1)}})) == "(1,)");
}

TEST_CASE("bfcl parser: its errors are the project's input errors (exit 3 if one escapes, not an internal error)") {
  CHECK_THROWS_AS(parse_python_expression("[f("), atlas::InputError);
  CHECK_THROWS_AS(decode_python("[f(v=1/0)]"), atlas::InputError);
}
