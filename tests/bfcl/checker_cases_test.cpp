// Hand-checked verdicts: each case's `valid` and `error_type` were worked out from the spec
// (docs/bfcl-checker.md: the behaviour of Gorilla's BFCL AST checker at commit 6ea57973,
// section cited per case), not from running this code.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <vector>

#include "tests/bfcl/bfcl_test_util.hpp"

namespace {

using atlas::suites::bfcl::BfclEntry;
using atlas::suites::bfcl::OutputFormat;
using atlas::test::bfcl::cat;
using atlas::test::bfcl::entry;
using atlas::test::bfcl::fn;

struct Case {
  const char* section;   ///< spec section the expectation comes from
  const char* fixture;   ///< key into fixtures()
  const char* output;
  bool valid;
  const char* error_type;  ///< "" when valid
  OutputFormat format = OutputFormat::python;
  bool underscore_to_dot = false;
};

const std::map<std::string, BfclEntry>& fixtures() {
  static const std::map<std::string, BfclEntry> f = [] {
    std::map<std::string, BfclEntry> m;
    const std::string fact = cat({"[", fn("math.factorial", R"({"number": {"type": "integer"}})", R"(["number"])"), "]"});
    m["fact"] = entry("simple_python_900", fact, R"([{"math.factorial": {"number": [5]}}])");
    const std::string area = cat({"[", fn("calc_area", R"({"base": {"type": "integer"}, "height": {"type": "integer"}, "unit": {"type": "string"}})",
                                      R"(["base", "height"])"), "]"});
    m["area"] = entry("simple_python_901", area, R"([{"calc_area": {"base": [10], "height": [5], "unit": ["units", ""]}}])");
    m["area_unit_needed"] = entry("simple_python_902", area, R"([{"calc_area": {"base": [10], "height": [5], "unit": ["units"]}}])");
    m["area_no_unit_in_gt"] = entry("simple_python_903", area, R"([{"calc_area": {"base": [10], "height": [5]}}])");
    const std::string flt = cat({"[", fn("f", R"({"x": {"type": "float"}})", R"(["x"])"), "]"});
    m["float"] = entry("simple_python_904", flt, R"([{"f": {"x": [2.0]}}])");
    const std::string arr = cat({"[", fn("g", R"({"values": {"type": "array", "items": {"type": "float"}}})", R"(["values"])"), "]"});
    m["arr_float"] = entry("simple_python_905", arr, R"([{"g": {"values": [[1.0, 3.0]]}}])");
    m["arr_float_int_gt"] = entry("simple_python_906", arr, R"([{"g": {"values": [[0, 5]]}}])");
    const std::string arr_s = cat({"[", fn("g2", R"({"cities": {"type": "array", "items": {"type": "string"}}})", R"(["cities"])"), "]"});
    m["arr_str"] = entry("simple_python_907", arr_s, R"([{"g2": {"cities": [["New York", "Boston"]]}}])");
    const std::string dict = cat({"[", fn("book", R"({"opts": {"type": "dict"}})", R"(["opts"])"), "]"});
    m["dict"] = entry("simple_python_908", dict, R"([{"book": {"opts": [{"city": ["NYC", "New York"], "nights": [2, ""]}]}}])");
    m["dict_two_keys"] = entry("simple_python_909", dict, R"([{"book": {"opts": [{"city": ["NYC"], "date": ["2024"]}]}}])");
    const std::string dict_opt = cat({"[", fn("book", R"({"opts": {"type": "dict"}})"), "]"});
    m["dict_only_omit"] = entry("simple_python_910", dict_opt, R"([{"book": {"opts": [""]}}])");
    const std::string ld = cat({"[", fn("order", R"({"items": {"type": "array", "items": {"type": "dict"}}})", R"(["items"])"), "]"});
    m["list_dict"] = entry("simple_python_911", ld, R"([{"order": {"items": [[{"name": ["apple"], "qty": [2]}]]}}])");
    m["list_dict_empty_gt"] = entry("simple_python_912", ld, R"([{"order": {"items": []}}])");
    const std::string tup = cat({"[", fn("pt", R"({"coords": {"type": "tuple", "items": {"type": "integer"}}})", R"(["coords"])"), "]"});
    m["tuple"] = entry("simple_python_913", tup, R"([{"pt": {"coords": [[1, 2]]}}])");
    const std::string flag = cat({"[", fn("flag", R"({"on": {"type": "boolean"}})", R"(["on"])"), "]"});
    m["bool"] = entry("simple_python_914", flag, R"([{"flag": {"on": [true]}}])");
    const std::string s = cat({"[", fn("s", R"({"mode": {"type": "string"}})", R"(["mode"])"), "]"});
    m["str_gt_bool"] = entry("live_simple_915-0-0", s, R"([{"s": {"mode": [true]}}])");
    const std::string n = cat({"[", fn("n", R"({"k": {"type": "integer"}})"), "]"});
    m["int_dontcare"] = entry("live_simple_916-0-0", n, R"([{"n": {"k": ["", "dontcare"]}}])");
    m["int_null"] = entry("live_simple_917-0-0", n, R"([{"n": {"k": ["", null]}}])");
    const std::string any = cat({"[", fn("a", R"({"v": {"type": "any"}})", R"(["v"])"), "]"});
    m["any"] = entry("simple_python_918", any, R"([{"a": {"v": ["X"]}}])");
    const std::string two = cat({"[", fn("add", R"({"x": {"type": "integer"}})", R"(["x"])"), ", " +
                            fn("sub", R"({"x": {"type": "integer"}})", R"(["x"])"), "]"});
    m["multiple"] = entry("multiple_919", two, R"([{"sub": {"x": [1]}}])");
    m["live_multiple"] = entry("live_multiple_920-0-0", two, R"([{"sub": {"x": [1]}}])");
    const std::string one = cat({"[", fn("f", R"({"x": {"type": "integer"}})", R"(["x"])"), "]"});
    m["parallel"] = entry("parallel_921", one, R"([{"f": {"x": [1, 2]}}, {"f": {"x": [1]}}])");
    m["live_parallel"] = entry("live_parallel_922-0-0", one, R"([{"f": {"x": [1, 2]}}, {"f": {"x": [1]}}])");
    const std::string fg = cat({"[", fn("f", R"({"x": {"type": "integer"}})", R"(["x"])"), ", " +
                           fn("g", R"({"y": {"type": "integer"}})", R"(["y"])"), "]"});
    m["parallel_multiple"] = entry("parallel_multiple_923", fg, R"([{"g": {"y": [1]}}, {"f": {"x": [2]}}])");
    m["live_parallel_multiple"] = entry("live_parallel_multiple_924-0-0", fg, R"([{"g": {"y": [1]}}, {"f": {"x": [2]}}])");
    m["live_simple"] = entry("live_simple_925-0-0", fact, R"([{"math.factorial": {"number": [5]}}])");
    m["irrelevance"] = entry("irrelevance_926", one);
    m["live_irrelevance"] = entry("live_irrelevance_927-0-0", one);
    m["live_relevance"] = entry("live_relevance_928-0-0", one);
    return m;
  }();
  return f;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      // --- decoding the prompt format (§2.2) and the format gate (§2.5)
      {"§2.2", "fact", "[math.factorial(number=5)]", true, ""},
      {"§2.2 step 2: brackets added", "fact", "math.factorial(number=5)", true, ""},
      {"§2.2 step 1: backticks/newlines/spaces trimmed", "fact", "```\n[math.factorial(number=5)]\n```  ", true, ""},
      {"§2.2 step 2: a tagged fence does not parse", "fact", "```python\n[math.factorial(number=5)]\n```", false, "ast_decoder:decoder_failed"},
      {"§2.2 step 2: leading prose", "fact", "Sure! [math.factorial(number=5)]", false, "ast_decoder:decoder_failed"},
      {"§2.2 step 3: an output wrapped in quotes fails", "fact", "'[math.factorial(number=5)]'", false, "ast_decoder:decoder_failed"},
      {"§2.2 step 1: trailing CR is not trimmed", "fact", "[math.factorial(number=5)]\r", false, "ast_decoder:decoder_failed"},
      {"§2.2 step 1: leading TAB is not trimmed", "fact", "\t[math.factorial(number=5)]", false, "ast_decoder:decoder_failed"},
      {"§2.2 step 4: two lists separated by ';'", "fact", "[math.factorial(number=5)]; [math.factorial(number=5)]", false, "ast_decoder:decoder_failed"},
      {"§2.2 step 4: two lists on separate lines", "fact", "[math.factorial(number=5)]\n[math.factorial(number=5)]", false, "ast_decoder:decoder_failed"},
      {"§2.2 step 5: a non-call element", "fact", "[math.factorial(number=5), 5]", false, "ast_decoder:decoder_failed"},
      {"§2.2 step 6: positional arguments are discarded", "fact", "[math.factorial(5)]", false, "simple_function_checker:missing_required"},
      {"§2.2 step 7: negative literal", "fact", "[math.factorial(number=-5)]", false, "value_error:others"},
      {"§2.2 step 7 quirk: +5 decodes as -5", "fact", "[math.factorial(number=+5)]", false, "value_error:others"},
      {"§2.2 step 7: binary operations are evaluated", "fact", "[math.factorial(number=2+3)]", true, ""},
      {"§2.2 step 7: hex int literal", "fact", "[math.factorial(number=0x5)]", true, ""},
      {"§2.2 step 7: bare identifier becomes a string", "fact", "[math.factorial(number=five)]", false, "type_error:simple"},
      {"§2.2 step 7: a bytes literal is a value of another type", "area", "[calc_area(base=10, height=5, unit=b'units')]", false, "type_error:simple"},
      {"§2.2 step 7: lambda fails", "fact", "[math.factorial(number=lambda: 5)]", false, "ast_decoder:decoder_failed"},
      {"§2.2 step 7: attribute access fails", "fact", "[math.factorial(number=math.pi)]", false, "ast_decoder:decoder_failed"},
      {"§2.2 step 7: negating a name fails", "fact", "[math.factorial(number=-x)]", false, "ast_decoder:decoder_failed"},
      {"§2.2 step 4: keyword as a parameter name is a syntax error", "fact", "[math.factorial(from=5)]", false, "ast_decoder:decoder_failed"},
      {"§2.5/§2.6: empty list passes the gate, fails the count", "fact", "[]", false, "simple_function_checker:wrong_count"},
      {"§2.6: simple needs exactly one call", "fact", "[math.factorial(number=5), math.factorial(number=5)]", false, "simple_function_checker:wrong_count"},
      {"§5 step 1: names are case-sensitive", "fact", "[Math.factorial(number=5)]", false, "simple_function_checker:wrong_func_name"},
      {"§5.1: float for an integer parameter", "fact", "[math.factorial(number=5.0)]", false, "type_error:simple"},
      {"§5.1: bool is not int", "fact", "[math.factorial(number=True)]", false, "type_error:simple"},
      // --- JSON return format (§2.4) and FC (§2.3)
      {"§2.4", "fact", R"([{"function": "math.factorial", "parameters": {"number": 5}}])", true, "", OutputFormat::json},
      {"§2.4: JSON error gives [] (count fails)", "fact", R"([{"function": "math.factorial", "parameters": {"number": 5})", false, "simple_function_checker:wrong_count", OutputFormat::json},
      {"§2.4: a missing 'parameters' key is a decoder failure", "fact", R"([{"function": "math.factorial"}])", false, "ast_decoder:decoder_failed", OutputFormat::json},
      {"§2.5: arguments that are not an object fail the gate", "fact", R"([{"function": "math.factorial", "parameters": [5]}])", false, "ast_decoder:decoder_wrong_output_format", OutputFormat::json},
      {"§2.3", "fact", R"([{"math.factorial": "{\"number\": 5}"}])", true, "", OutputFormat::fc},
      {"§2.3: argument text that is not JSON", "fact", R"([{"math.factorial": "{number: 5}"}])", false, "ast_decoder:decoder_failed", OutputFormat::fc},
      {"§2.5: arguments decoding to a non-object", "fact", R"([{"math.factorial": "5"}])", false, "ast_decoder:decoder_wrong_output_format", OutputFormat::fc},
      {"§5 step 1: underscore_to_dot expects '_'", "fact", R"([{"math_factorial": "{\"number\": 5}"}])", true, "", OutputFormat::fc, true},
      {"§5 step 1: without the flag '_' is a wrong name", "fact", R"([{"math_factorial": "{\"number\": 5}"}])", false, "simple_function_checker:wrong_func_name", OutputFormat::fc},
      {"§5 step 1: with the flag the dotted name is wrong", "fact", "[math.factorial(number=5)]", false, "simple_function_checker:wrong_func_name", OutputFormat::python, true},
      {"§2.3: FC text answer is not a call list", "fact", R"("I think the answer is 120")", false, "ast_decoder:decoder_failed", OutputFormat::fc},
      // --- single-call check (§5)
      {"§5 step 4: optional parameter omitted", "area", "[calc_area(base=10, height=5)]", true, ""},
      {"§5 step 2", "area", "[calc_area(base=10)]", false, "simple_function_checker:missing_required"},
      {"§5.2: strings compare lower-cased", "area", "[calc_area(base=10, height=5, unit='Units')]", true, ""},
      {"§5.2", "area", "[calc_area(base=10, height=5, unit='meters')]", false, "value_error:string"},
      {"§5 step 3.1: not in the schema", "area", "[calc_area(base=10, height=5, color='red')]", false, "simple_function_checker:unexpected_param"},
      {"§5.2: empty string accepted when optional", "area", "[calc_area(base=10, height=5, unit='')]", true, ""},
      {"§2.2 step 6: **mapping gives a null key", "area", "[calc_area(base=10, height=5, **extra)]", false, "simple_function_checker:unexpected_param"},
      {"§2.2 step 6: a repeated keyword keeps the last value", "area", "[calc_area(base=10, height=5, base=11)]", false, "value_error:others"},
      {"§5 step 4", "area_unit_needed", "[calc_area(base=10, height=5)]", false, "simple_function_checker:missing_optional"},
      {"§1: a schema parameter the GT does not mention", "area_no_unit_in_gt", "[calc_area(base=10, height=5, unit='units')]", false, "simple_function_checker:unexpected_param"},
      {"§5 step 3.4: int accepted for float", "float", "[f(x=2)]", true, ""},
      {"§5 step 3.7", "float", "[f(x=2.5)]", false, "value_error:others"},
      {"§5.1", "float", "[f(x='2')]", false, "type_error:simple"},
      {"§2.2 step 7: scientific float", "float", "[f(x=2e0)]", true, ""},
      {"§5.5", "arr_float", "[g(values=[1.0, 3.0])]", true, ""},
      {"§5.1: no int->float coercion inside arrays", "arr_float", "[g(values=[1, 3])]", false, "type_error:nested"},
      {"§5.5: order matters", "arr_float", "[g(values=[3.0, 1.0])]", false, "value_error:list/tuple"},
      {"§5 step 3.3: a tuple for an array stays a tuple", "arr_float", "[g(values=(1.0, 3.0))]", false, "type_error:simple"},
      {"§5.1: GT ints make int elements pass", "arr_float_int_gt", "[g(values=[0, 5])]", true, ""},
      {"§5.5: list string elements normalised", "arr_str", "[g2(cities=['new york', 'BOSTON'])]", true, ""},
      {"§5.3", "dict", "[book(opts={'city': 'new york', 'nights': 2})]", true, ""},
      {"§5.3: optional dict key omitted", "dict", "[book(opts={'city': 'NYC'})]", true, ""},
      {"§5.3: unknown dict key", "dict", "[book(opts={'city': 'NYC', 'pets': True})]", false, "value_error:dict_key"},
      {"§5.3: wrong dict value", "dict", "[book(opts={'city': 'LA', 'nights': 2})]", false, "value_error:dict_value"},
      {"§5.3: missing required dict key", "dict", "[book(opts={'nights': 2})]", false, "value_error:dict_key"},
      {"§5.3: no type check inside dicts (2.0 == 2)", "dict", "[book(opts={'city': 'NYC', 'nights': 2.0})]", true, ""},
      {"§5.3 quirk: the missing-key pass overwrites dict_value", "dict_two_keys", "[book(opts={'city': 'LA'})]", false, "value_error:dict_key"},
      {"§5.3: only \"\" alternatives", "dict_only_omit", "[book(opts={})]", false, "dict_checker:unclear"},
      {"§5.3: an optional dict left out", "dict_only_omit", "[book()]", true, ""},
      {"§5.4", "list_dict", "[order(items=[{'name': 'Apple', 'qty': 2}])]", true, ""},
      {"§5.4", "list_dict", "[order(items=[])]", false, "value_error:list_dict_count"},
      {"§5.4 -> §5.3", "list_dict", "[order(items=[{'name': 'apple', 'qty': 3}])]", false, "value_error:dict_value"},
      {"§5.1: element type checked against the GT list", "list_dict", "[order(items=[5])]", false, "type_error:nested"},
      {"§5.1/§9: an empty acceptable list fails the type check before list_dict_checker:unclear", "list_dict_empty_gt", "[order(items=[])]", false, "type_error:simple"},
      {"§5 step 3.3: tuple schema accepts a tuple", "tuple", "[pt(coords=(1, 2))]", true, ""},
      {"§5 step 3.3: tuple schema accepts a list", "tuple", "[pt(coords=[1, 2])]", true, ""},
      {"§5.1", "bool", "[flag(on=True)]", true, ""},
      {"§2.2 step 7: `true` is a bare identifier -> string", "bool", "[flag(on=true)]", false, "type_error:simple"},
      {"§5.1: string param with GT [true] accepts the bool", "str_gt_bool", "[s(mode=True)]", true, ""},
      {"§5.1: ... and no string (plain membership)", "str_gt_bool", "[s(mode='True')]", false, "value_error:others"},
      {"§5.1: integer param with GT dontcare accepts the string", "int_dontcare", "[n(k='dontcare')]", true, ""},
      {"§5.1: ... and rejects ints", "int_dontcare", "[n(k=3)]", false, "value_error:others"},
      {"§5.1: GT [\"\", null] accepts None", "int_null", "[n(k=None)]", true, ""},
      {"§5 step 3.2: any -> str", "any", "[a(v='x')]", true, ""},
      {"§5 step 3.2: any -> str", "any", "[a(v=5)]", false, "type_error:simple"},
      // --- multiple (§3), parallel (§4), live categories dispatch by name (§2.6)
      {"§3", "multiple", "[sub(x=1)]", true, ""},
      {"§3: another function of the menu", "multiple", "[add(x=1)]", false, "simple_function_checker:wrong_func_name"},
      {"§3", "multiple", "[sub(x=1), add(x=1)]", false, "multiple_function_checker:wrong_count"},
      {"§2.6: live_multiple uses the multiple checker", "live_multiple", "[]", false, "multiple_function_checker:wrong_count"},
      {"§4", "parallel", "[f(x=2), f(x=1)]", true, ""},
      {"§4 quirk: greedy matching rejects a valid reordering", "parallel", "[f(x=1), f(x=2)]", false, "parallel_function_checker_no_order:cannot_find_match"},
      {"§4", "parallel", "[f(x=1)]", false, "parallel_function_checker_no_order:wrong_count"},
      {"§4 quirk (live_parallel)", "live_parallel", "[f(x=1), f(x=2)]", false, "parallel_function_checker_no_order:cannot_find_match"},
      {"§4: order-insensitive", "parallel_multiple", "[f(x=2), g(y=1)]", true, ""},
      {"§4", "parallel_multiple", "[f(x=2), g(y=2)]", false, "parallel_function_checker_no_order:cannot_find_match"},
      {"§4", "live_parallel_multiple", "[g(y=1)]", false, "parallel_function_checker_no_order:wrong_count"},
      {"§2.6: live_simple uses the simple checker", "live_simple", "[math.factorial(number=5)]", true, ""},
      {"§2.6", "live_simple", "[]", false, "simple_function_checker:wrong_count"},
      // --- irrelevance / relevance (§6)
      {"§6: prose is no call", "irrelevance", "I cannot help with that.", true, ""},
      {"§6: [] is no call", "irrelevance", "[]", true, ""},
      {"§6: empty output is no call", "irrelevance", "", true, ""},
      {"§6: a tagged code fence is no call", "irrelevance", "```python\n[f(x=1)]\n```", true, ""},
      {"§6: any decodable call fails, even unknown and argument-less", "irrelevance", "[unknown_func()]", false, "irrelevance_error:decoder_success"},
      {"§6", "irrelevance", "[f(x=1)]", false, "irrelevance_error:decoder_success"},
      {"§6", "live_irrelevance", "f(x=1)", false, "irrelevance_error:decoder_success"},
      {"§6 (json format: a JSON error is no call)", "live_irrelevance", R"([{"function": "f", "parameters": {)", true, "", OutputFormat::json},
      {"§6 (fc format)", "irrelevance", R"([{"f": "{\"x\": 1}"}])", false, "irrelevance_error:decoder_success", OutputFormat::fc},
      {"§6 (fc format: text answer)", "irrelevance", R"("No function fits.")", true, "", OutputFormat::fc},
      {"§6: which call is not checked", "live_relevance", "[anything(a=1)]", true, ""},
      {"§6", "live_relevance", "No call needed.", false, "relevance_error:decoder_failed"},
      {"§6: [] is no call", "live_relevance", "[]", false, "relevance_error:decoder_failed"},
  };
  return c;
}

}  // namespace

TEST_CASE("bfcl checker: hand-checked verdicts from the spec") {
  CHECK(cases().size() >= 60);
  for (const Case& c : cases()) {
    const std::string info = std::string(c.section) + " | " + c.fixture + " | " + c.output;
    INFO(info);
    const auto it = fixtures().find(c.fixture);
    REQUIRE(it != fixtures().end());
    const auto v = atlas::test::bfcl::score(it->second, c.output, c.format, c.underscore_to_dot);
    CHECK(v.valid == c.valid);
    CHECK(v.error_type == std::string(c.error_type));
  }
}

TEST_CASE("bfcl checker: the cases cover every category and every reachable error type (spec §9)") {
  std::set<std::string> categories, errors;
  for (const Case& c : cases()) {
    categories.insert(fixtures().at(c.fixture).category);
    if (*c.error_type) errors.insert(c.error_type);
  }
  for (const auto& cat : atlas::suites::bfcl::all_categories()) CHECK_MESSAGE(categories.count(cat), cat);
  for (const char* e : {"ast_decoder:decoder_failed", "ast_decoder:decoder_wrong_output_format",
                        "simple_function_checker:wrong_count", "simple_function_checker:wrong_func_name",
                        "simple_function_checker:missing_required", "simple_function_checker:unexpected_param",
                        "simple_function_checker:missing_optional", "type_error:simple", "type_error:nested",
                        "value_error:string", "value_error:list/tuple", "value_error:dict_key", "value_error:dict_value",
                        "value_error:list_dict_count", "value_error:others", "dict_checker:unclear",
                        "multiple_function_checker:wrong_count", "parallel_function_checker_no_order:wrong_count",
                        "parallel_function_checker_no_order:cannot_find_match", "irrelevance_error:decoder_success",
                        "relevance_error:decoder_failed"}) {
    CHECK_MESSAGE(errors.count(e), e);
  }
}

TEST_CASE("bfcl checker: standardize_string (spec §5.2)") {
  using atlas::suites::bfcl::standardize_string;
  CHECK(standardize_string("Boston, MA") == "bostonma");
  CHECK(standardize_string("x^2") == standardize_string("x**2"));
  CHECK(standardize_string("2019/12/13") == standardize_string("2019-12-13"));
  CHECK(standardize_string("it's") == "it\"s");
  CHECK(standardize_string("a\tb\n") == "a\tb\n");         // tabs and newlines kept
  CHECK(standardize_string("São Paulo!") == "sãopaulo!");  // accents and other punctuation kept
  CHECK(standardize_string("ÉCOLE") == "école");           // str.lower() is Unicode-aware
}
