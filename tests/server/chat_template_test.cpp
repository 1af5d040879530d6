#if ATLAS_HAVE_HTTPLIB  // atlas_server exists only where cpp-httplib is found
#include <doctest/doctest.h>

#include "common/atomic_file.hpp"
#include "server/chat_template.hpp"
#include "server/error.hpp"
#include "server/generator.hpp"
#include "tests/test_data.hpp"

using atlas::server::ChatTemplate;
using atlas::server::ServerError;
using atlas::server::TemplateValue;

namespace {
std::filesystem::path template_dir() { return atlas::test::source_dir() / "tests/server/templates"; }
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
                       ServerError);
  CHECK_THROWS_WITH_AS(ChatTemplate("{% if x %}never closed"), "chat template line 1: 'if' without 'endif'", ServerError);
  CHECK_THROWS_WITH_AS(ChatTemplate("{{ x"), "chat template line 1: unclosed '{{'", ServerError);
  CHECK_THROWS_WITH_AS(ChatTemplate("{{ 'abc }}"), "chat template line 1: unclosed '{{'", ServerError);
  CHECK_THROWS_WITH_AS(ChatTemplate("\n\n{{ x | nosuchfilter }}").render({{"x", 1}}),
                       "chat template line 3: unsupported filter '|nosuchfilter'", ServerError);
  CHECK_THROWS_WITH_AS(ChatTemplate("{{ raise_exception('Only user and assistant roles') }}").render(TemplateValue::object()),
                       "chat template raised an exception: Only user and assistant roles", ServerError);
  CHECK_THROWS_AS(ChatTemplate("{{ 1 + 'a' }}").render(TemplateValue::object()), ServerError);
  CHECK_THROWS_AS(ChatTemplate("{{ 1 / 0 }}").render(TemplateValue::object()), ServerError);
  // Found by fuzz_jinja: an integer literal beyond 64 bits escaped as std::out_of_range.
  CHECK_THROWS_WITH_AS(ChatTemplate("\n{{ 99999999999999999999 }}"), "chat template line 2: number literal 99999999999999999999 is out of range", ServerError);
}

TEST_CASE("chat template: the fallback template renders turns, tools and tool calls") {
  const ChatTemplate t(atlas::server::fallback_chat_template());
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
  CHECK(atlas::server::python_json_dumps(v) == R"({"z": [1, 2.5, "é\n"], "a": {}, "m": [], "n": null, "t": true})");
  CHECK(atlas::server::python_json_dumps(TemplateValue::parse(R"({"a": [1]})"), 2) == "{\n  \"a\": [\n    1\n  ]\n}");
}

#endif

TEST_CASE("model_chat_template: a template list entry whose name is not a string is skipped") {
  // tokenizer_config.json's chat_template may be a list of {name, template}; a numeric name made
  // json::value() throw nlohmann's type_error at atlas-serve's start (found reviewing value()
  // calls after fuzz_tokenizer_json's type_error finding).
  const auto dir = atlas::test::scratch_dir("chat-template-list");
  atlas::write_file_atomic(dir / "tokenizer_config.json",
                           R"({"chat_template": [{"name": 5, "template": "no"}, {"name": "default", "template": "T"}]})");
  atlas::engine::Model m;
  m.source.path = dir;
  CHECK(atlas::server::model_chat_template(m) == "T");
}
