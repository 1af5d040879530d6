#include <doctest/doctest.h>

#include "chat/chat_template.hpp"
#include "common/atomic_file.hpp"
#include "tests/test_data.hpp"

using atlas::chat::ChatTemplate;
using atlas::chat::TemplateError;
using atlas::chat::TemplateValue;

namespace {
std::filesystem::path template_dir() { return atlas::test::source_dir() / "tests/chat/templates"; }
std::string render(const std::string& src, const TemplateValue& ctx) { return ChatTemplate(src).render(ctx); }
}  // namespace

TEST_CASE("chat template: output equals Python jinja2 for real-world templates and every construct") {
  const auto cases = TemplateValue::parse(atlas::read_file(template_dir() / "cases.json"));
  REQUIRE(cases.size() == 4);
  for (const auto& c : cases) {
    CAPTURE(c["name"].get<std::string>());
    const std::string src = atlas::read_file(template_dir() / c["template"].get<std::string>());
    const std::string expected = atlas::read_file(template_dir() / c["expected"].get<std::string>());
    CHECK(render(src, c["context"]) == expected);
  }
}

TEST_CASE("chat template: whitespace control") {
  const TemplateValue ctx = {{"x", "v"}};
  CHECK(render("a  {{- x -}}  b", ctx) == "avb");
  CHECK(render("a\n  {% if true %}\nT\n  {% endif %}\nb", ctx) == "a\nT\nb");  // lstrip + trim_blocks
  CHECK(render("a {{ x }}\nb", ctx) == "a v\nb");                             // expressions keep their newline
  CHECK(render("a\n{#- comment -#}\nb", ctx) == "ab");
  CHECK(render("  {%+ if true %}x{% endif %}", ctx) == "  x");
}

TEST_CASE("chat template: undefined values print nothing and are falsy; none prints None") {
  const TemplateValue ctx = {{"m", {{"a", nullptr}}}};
  CHECK(render("[{{ nope }}][{{ m.b }}][{{ m.a }}][{{ m.b.c }}]", ctx) == "[][][None][]");
  CHECK(render("{% if nope %}y{% else %}n{% endif %}{% if m.a is none %}N{% endif %}", ctx) == "nN");
}

TEST_CASE("chat template: set inside a loop does not leak; namespace attributes do") {
  const TemplateValue ctx = {{"xs", {1, 2, 3}}};
  CHECK(render("{% set t = 0 %}{% for x in xs %}{% set t = t + x %}{% endfor %}{{ t }}", ctx) == "0");
  CHECK(render("{% set ns = namespace(t=0) %}{% for x in xs %}{% set ns.t = ns.t + x %}{% endfor %}{{ ns.t }}", ctx) == "6");
}

TEST_CASE("chat template: errors name the line and the construct") {
  CHECK_THROWS_WITH_AS(ChatTemplate("ok\n{% macro f() %}{% endmacro %}"), "chat template line 2: unsupported statement '{% macro %}'",
                       TemplateError);
  CHECK_THROWS_WITH_AS(ChatTemplate("{% if x %}never closed"), "chat template line 1: 'if' without 'endif'", TemplateError);
  CHECK_THROWS_WITH_AS(ChatTemplate("{{ x"), "chat template line 1: unclosed '{{'", TemplateError);
  CHECK_THROWS_WITH_AS(ChatTemplate("{{ 'abc }}"), "chat template line 1: unclosed '{{'", TemplateError);
  CHECK_THROWS_WITH_AS(ChatTemplate("\n\n{{ x | nosuchfilter }}").render({{"x", 1}}),
                       "chat template line 3: unsupported filter '|nosuchfilter'", TemplateError);
  CHECK_THROWS_WITH_AS(ChatTemplate("{{ raise_exception('Only user and assistant roles') }}").render(TemplateValue::object()),
                       "chat template raised an exception: Only user and assistant roles", TemplateError);
  CHECK_THROWS_AS(ChatTemplate("{{ 1 + 'a' }}").render(TemplateValue::object()), TemplateError);
  CHECK_THROWS_AS(ChatTemplate("{{ 1 / 0 }}").render(TemplateValue::object()), TemplateError);
  // Found by fuzz_jinja: an integer literal beyond 64 bits escaped as std::out_of_range.
  CHECK_THROWS_WITH_AS(ChatTemplate("\n{{ 99999999999999999999 }}"), "chat template line 2: number literal 99999999999999999999 is out of range", TemplateError);
}

TEST_CASE("chat template: nesting past 256 levels is an error, not a stack overflow (fuzz_jinja)") {
  const TemplateValue none = TemplateValue::object();
  auto repeat = [](const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  // Recursion: 256 nested parentheses render; 20,000 (the fuzzer's shape) fail with the line.
  CHECK(render("{{ " + repeat("(", 200) + "1" + repeat(")", 200) + " }}", none) == "1");
  CHECK_THROWS_WITH_AS(ChatTemplate("{{ " + repeat("(", 20'000) + "1" + repeat(")", 20'000) + " }}"),
                       "chat template line 1: expression nested deeper than 256 levels", TemplateError);
  CHECK_THROWS_WITH_AS(ChatTemplate("{{ " + repeat("not ", 20'000) + "1 }}"),
                       "chat template line 1: expression nested deeper than 256 levels", TemplateError);
  CHECK_THROWS_WITH_AS(ChatTemplate("{{ " + repeat("-", 20'000) + "1 }}"),
                       "chat template line 1: expression nested deeper than 256 levels", TemplateError);
  // Chains a loop builds: as deep as recursion for the evaluator and the destructors.
  CHECK(render("{{ 1" + repeat(" + 1", 255) + " }}", none) == "256");
  CHECK_THROWS_WITH_AS(ChatTemplate("{{ 1" + repeat(" + 1", 100'000) + " }}"),
                       "chat template line 1: expression nested deeper than 256 levels", TemplateError);
  CHECK_THROWS_AS(ChatTemplate("{{ x" + repeat(".a", 100'000) + " }}"), TemplateError);
  CHECK_THROWS_AS(ChatTemplate("{{ x" + repeat("|string", 100'000) + " }}"), TemplateError);
  // Statement blocks.
  CHECK(render(repeat("{% if true %}", 100) + "y" + repeat("{% endif %}", 100), none) == "y");
  CHECK_THROWS_WITH_AS(ChatTemplate(repeat("{% if true %}", 20'000) + repeat("{% endif %}", 20'000)),
                       "chat template line 1: statement blocks nested deeper than 256 levels", TemplateError);
}

TEST_CASE("chat template: integer overflow is an error naming the operands, never undefined behaviour") {
  const TemplateValue none = TemplateValue::object();
  CHECK_THROWS_WITH_AS(render("{{ 9223372036854775807 * 2 }}", none),
                       "chat template line 1: integer overflow: 9223372036854775807 * 2 does not fit 64 bits", TemplateError);
  CHECK_THROWS_AS(render("{{ 9223372036854775807 + 1 }}", none), TemplateError);
  CHECK_THROWS_AS(render("{{ -9223372036854775807 - 2 }}", none), TemplateError);
  CHECK_THROWS_AS(render("{{ -(-9223372036854775807 - 1) }}", none), TemplateError);
  CHECK_THROWS_AS(render("{{ (-9223372036854775807 - 1) // -1 }}", none), TemplateError);
  CHECK_THROWS_AS(render("{{ 1e300 | int }}", none), TemplateError);
  CHECK_THROWS_AS(render("{{ range(1e300) }}", none), TemplateError);
  // Python's values where they fit: floor division and modulo take the divisor's sign.
  CHECK(render("{{ (-9223372036854775807 - 1) % -1 }}", none) == "0");
  CHECK(render("{{ -7 // 2 }} {{ -7 % 2 }} {{ 7 // -2 }} {{ 7 % -2 }} {{ 9223372036854775807 // 1 }}", none) ==
        "-4 1 -4 -1 9223372036854775807");
  CHECK(render("{{ 9007199254740993 | int }}", none) == "9007199254740993");  // 2^53 + 1: not through a double
  CHECK(render("{{ range(9223372036854775800, 9223372036854775807, 4) | length }}", none) == "2");
}

TEST_CASE("chat template: the render budget leaves room for long real conversations") {
  // 2,000 turns with tool calls and 20 tools through Qwen2.5's and Llama 3's real templates:
  // far inside the work budget (these render in well under a second).
  const auto cases = TemplateValue::parse(atlas::read_file(template_dir() / "cases.json"));
  for (const auto& c : cases) {
    if (c["name"] != "qwen25-tools" && c["name"] != "llama3") continue;
    CAPTURE(c["name"].get<std::string>());
    TemplateValue ctx = c["context"];
    const TemplateValue turns = ctx["messages"];
    TemplateValue messages = TemplateValue::array();
    while (messages.size() < 2000) {
      for (const auto& m : turns) messages.push_back(m);
    }
    ctx["messages"] = messages;
    if (ctx.contains("tools")) {
      const TemplateValue tools = ctx["tools"];
      for (int i = 0; i < 20; ++i) ctx["tools"].push_back(tools[0]);
    }
    const std::string once = render(atlas::read_file(template_dir() / c["template"].get<std::string>()), c["context"]);
    const std::string many = render(atlas::read_file(template_dir() / c["template"].get<std::string>()), ctx);
    CHECK(many.size() > 100 * once.size() / turns.size());
  }
}

TEST_CASE("chat template: a render that would hang or exhaust memory stops with an error") {
  const TemplateValue none = TemplateValue::object();
  CHECK_THROWS_WITH_AS(render("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", none),
                       "chat template line 1: template rendering exceeded 2000000 steps (a loop that never ends in practice?)",
                       TemplateError);
  CHECK_THROWS_WITH_AS(render("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", none),
                       "chat template line 1: a string longer than 16777216 bytes", TemplateError);
  CHECK_THROWS_WITH_AS(render("{% for i in range(17000) %}" + std::string(1000, 'x') + "{% endfor %}", none),
                       "chat template line 1: rendered text longer than 16777216 bytes", TemplateError);
  CHECK_THROWS_WITH_AS(render("{% set ns = namespace(l=[1]) %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}", none),
                       "chat template line 1: a list has more than 262144 elements", TemplateError);
  // Review of the same code: `a + a` doubled below the top level (one 1 MiB string per item), and
  // a loop that only reads a big nested value copied it once per reference for one unit each.
  const TemplateValue big = {{"s", std::string(1 << 20, 'x')}};
  std::string doubling = "{% set a = [s] %}";
  for (int i = 0; i < 12; ++i) doubling += "{% set a = a + a %}";
  CHECK_THROWS_WITH_AS(render(doubling + "{{ a | length }}", big),
                       "chat template line 1: a list holds more than 16777216 bytes of text", TemplateError);
  TemplateValue nested = TemplateValue::object();
  nested["big"] = TemplateValue::array();
  for (int i = 0; i < 4; ++i) nested["big"].push_back(TemplateValue(std::vector<int>(60000, 0)));
  CHECK_THROWS_WITH_AS(render("{% for i in range(100000) %}{{ big | length }}{% endfor %}", nested),
                       "chat template line 1: template rendering exceeded 2000000 steps (a loop that never ends in practice?)",
                       TemplateError);
}

// Replayed public reports (docs/fuzzing.md, "Replay of public bug reports"): growth below the top
// level of a value, which the per-expression size check does not see.
TEST_CASE("chat template: values that double or nest below their top level, and tojson/replace/join blow-ups, stop with an error") {
  const TemplateValue none = TemplateValue::object();
  // [a, a] has two items at every step but 2^64 elements after 64 (ran out of memory).
  CHECK_THROWS_WITH_AS(render("{% set ns = namespace(a=[1]) %}{% for i in range(64) %}{% set ns.a = [ns.a, ns.a] %}{% endfor %}", none),
                       "chat template line 1: a list has more than 262144 elements", TemplateError);
  // a = [a] 100,000 times: printing recursed once per level (hung copying, then overflowed the stack).
  CHECK_THROWS_WITH_AS(render("{% set ns = namespace(a=1) %}{% for i in range(100000) %}{% set ns.a = [ns.a] %}{% endfor %}{{ ns.a }}", none),
                       "chat template line 1: a list nests deeper than 512 levels", TemplateError);
  CHECK_THROWS_WITH_AS(render("{% set ns = namespace(a=1) %}{% for i in range(100000) %}{% set ns.a = {'k': ns.a} %}{% endfor %}", none),
                       "chat template line 1: a dict nests deeper than 512 levels", TemplateError);
  CHECK_THROWS_WITH_AS(render("{% set ns = namespace(a=1) %}{% for i in range(100000) %}{% set ns.a = namespace(b=ns.a) %}{% endfor %}", none),
                       "chat template line 1: a namespace nests deeper than 512 levels", TemplateError);
  // indent x depth spaces per line (ran out of memory).
  CHECK_THROWS_WITH_AS(render("{{ [[1]] | tojson(indent=2000000000) }}", none), "chat template line 1: tojson indent 2000000000 is too large (at most 1024)",
                       TemplateError);
  // Results judged before they are built: 4,000 'a's each replaced by 16 KiB is 64 MiB.
  CHECK_THROWS_WITH_AS(render("{% set ns = namespace(s='a', t='b') %}{% for i in range(12) %}{% set ns.s = ns.s ~ ns.s %}{% set ns.t = ns.t ~ ns.t %}{% endfor %}"
                              "{% for i in range(2) %}{% set ns.t = ns.t ~ ns.t %}{% endfor %}{{ ns.s.replace('a', ns.t) }}",
                              none),
                       "chat template line 1: replace() would build more than 16777216 bytes", TemplateError);
  CHECK_THROWS_WITH_AS(render("{% set ns = namespace(t='b') %}{% for i in range(20) %}{% set ns.t = ns.t ~ ns.t %}{% endfor %}"
                              "{{ range(100) | join(ns.t) }}",  // a 1 MiB separator 99 times
                              none),
                       "chat template line 1: join() builds more than 16777216 bytes", TemplateError);
  // Ordinary use is unaffected.
  CHECK(render("{{ [[1, {'a': [2]}]] | tojson(indent=2) }}{{ 'abc'.replace('b', 'xyz') }}{{ ['a', 'b'] | join('-') }}", none) ==
        "[\n  [\n    1,\n    {\n      \"a\": [\n        2\n      ]\n    }\n  ]\n]axyzca-b");
}

TEST_CASE("chat template: the fallback template renders turns, tools and tool calls") {
  const ChatTemplate t(atlas::chat::fallback_chat_template());
  TemplateValue ctx = TemplateValue::parse(R"({
    "add_generation_prompt": true,
    "tools": [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}],
    "messages": [
      {"role": "system", "content": "Be kind."},
      {"role": "user", "content": " 1+2? "},
      {"role": "assistant", "content": null,
       "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 1, \"b\": 2}"}}]},
      {"role": "tool", "content": "3"}
    ]})");
  CHECK(t.render(ctx) ==
        "System: You can call these tools. To call one, answer with <tool_call>{\"name\": <tool name>, \"arguments\": "
        "<arguments object>}</tool_call>.\n"
        "{\"type\": \"function\", \"function\": {\"name\": \"add\", \"parameters\": {\"type\": \"object\"}}}\n\n"
        "System: Be kind.\n\n"
        "User: 1+2?\n\n"
        "Assistant: <tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}</tool_call>\n\n"
        "Tool: 3\n\n"
        "Assistant:");
  ctx.erase("tools");
  ctx["messages"] = TemplateValue::parse(R"([{"role": "user", "content": "Hi"}])");
  ctx["add_generation_prompt"] = false;
  CHECK(t.render(ctx) == "User: Hi\n\n");
}

TEST_CASE("python_json_dumps: json.dumps separators and key order") {
  const auto v = TemplateValue::parse(R"({"z": [1, 2.5, "é\n"], "a": {}, "m": [], "n": null, "t": true})");
  CHECK(atlas::chat::python_json_dumps(v) == R"({"z": [1, 2.5, "é\n"], "a": {}, "m": [], "n": null, "t": true})");
  CHECK(atlas::chat::python_json_dumps(TemplateValue::parse(R"({"a": [1]})"), 2) == "{\n  \"a\": [\n    1\n  ]\n}");
}
