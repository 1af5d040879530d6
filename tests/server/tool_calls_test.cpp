#if ATLAS_HAVE_HTTPLIB  // atlas_server exists only where cpp-httplib is found
#include <doctest/doctest.h>

#include "server/tool_calls.hpp"

using namespace atlas::server;

TEST_CASE("tool calls: Hermes blocks, several, with text around") {
  const auto r = parse_tool_calls(
      "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n"
      "<tool_call>{\"name\": \"get_time\", \"arguments\": \"{\\\"tz\\\": \\\"CET\\\"}\"}</tool_call>");
  REQUIRE(r.calls.size() == 2);
  CHECK(r.calls[0].name == "get_weather");
  CHECK(r.calls[0].arguments == R"({"city": "Paris"})");
  CHECK(r.calls[1].name == "get_time");
  CHECK(r.calls[1].arguments == R"({"tz": "CET"})");  // string arguments pass through
  CHECK(r.content == "Let me check.");
}

TEST_CASE("tool calls: a block that is not a call stays in the content; unterminated block is read") {
  auto r = parse_tool_calls("<tool_call>not json</tool_call> done");
  CHECK(r.calls.empty());
  CHECK(r.content == "<tool_call>not json</tool_call> done");
  r = parse_tool_calls("<tool_call>{\"name\": \"f\"}");
  REQUIRE(r.calls.size() == 1);
  CHECK(r.calls[0].name == "f");
  CHECK(r.calls[0].arguments == "{}");
  r = parse_tool_calls("plain answer");
  CHECK(r.calls.empty());
  CHECK(r.content == "plain answer");
}

TEST_CASE("tool calls: Python-call lists with literal arguments") {
  std::vector<ToolCall> calls;
  REQUIRE(parse_pythonic_calls(
      " [get_weather(city='San Francisco', days=3), math.hypot(x=-1.5e2, y=+4, ok=True, none=None, "
      "tags=[\"a\", 'b\\'c'], opts={'k': (1, 2)})] ",
      calls));
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].name == "get_weather");
  CHECK(calls[0].arguments == R"({"city": "San Francisco", "days": 3})");
  CHECK(calls[1].name == "math.hypot");
  CHECK(calls[1].arguments == R"({"x": -150.0, "y": 4, "ok": true, "none": null, "tags": ["a", "b'c"], "opts": {"k": [1, 2]}})");
  REQUIRE(parse_pythonic_calls("[noargs()]", calls));
  CHECK(calls[0].arguments == "{}");
  CHECK_FALSE(parse_pythonic_calls("[f(1)]", calls));          // positional arguments
  CHECK_FALSE(parse_pythonic_calls("[f(a=1)] trailing", calls));
  CHECK_FALSE(parse_pythonic_calls("[1, 2, 3]", calls));
  CHECK_FALSE(parse_pythonic_calls("[]", calls));
  CHECK_FALSE(parse_pythonic_calls("[f(a=unknown_name)]", calls));
  const auto r = parse_tool_calls("[f(a=1)]");
  REQUIRE(r.calls.size() == 1);
  CHECK(r.content.empty());
}

namespace {
/// Streams `text` in pieces of `step` bytes (1 = every byte boundary) and collects the deltas.
ToolCallParse stream_in_pieces(const std::string& text, std::size_t step, std::size_t offset = 0) {
  ToolCallStream s;
  ToolCallParse out;
  auto take = [&](ToolCallStream::Delta d) {
    out.content += d.content;
    for (auto& c : d.calls) out.calls.push_back(c);
  };
  std::size_t i = 0;
  if (offset) {
    take(s.push(text.substr(0, offset)));
    i = offset;
  }
  for (; i < text.size(); i += step) take(s.push(text.substr(i, step)));
  take(s.finish());
  return out;
}
}  // namespace

TEST_CASE("tool calls: streaming gives the same calls and content at every split position") {
  const std::string text =
      "Sure. <tool_call>{\"name\": \"a\", \"arguments\": {\"x\": 1}}</tool_call> and <tool_call>{\"name\": \"b\", "
      "\"arguments\": {}}</tool_call> <tool_ca but not a tag";
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    CAPTURE(cut);
    const auto r = stream_in_pieces(text, text.size(), cut);  // two pieces split at `cut`
    REQUIRE(r.calls.size() == 2);
    CHECK(r.calls[0].name == "a");
    CHECK(r.calls[0].arguments == R"({"x": 1})");
    CHECK(r.calls[1].name == "b");
    CHECK(r.content == "Sure.  and  <tool_ca but not a tag");
  }
  const auto bytewise = stream_in_pieces(text, 1);
  CHECK(bytewise.calls.size() == 2);
  CHECK(bytewise.content == "Sure.  and  <tool_ca but not a tag");
}

TEST_CASE("tool calls: streaming emits a Hermes call as soon as its closing tag arrives") {
  ToolCallStream s;
  auto d = s.push("Hi <tool_c");
  CHECK(d.content == "Hi ");  // a possible tag start is held back
  d = s.push("all>{\"name\": \"f\", \"arguments\": {}}</tool_call>");
  REQUIRE(d.calls.size() == 1);
  CHECK(d.calls[0].name == "f");
  d = s.push(" tail");
  CHECK(d.content == " tail");
  CHECK(s.finish().content.empty());
}

TEST_CASE("tool calls: a Python-call answer is held until the end; plain '[' text is released") {
  ToolCallStream s;
  CHECK(s.push("[f(a=").content.empty());
  CHECK(s.push("1)]").content.empty());
  auto d = s.finish();
  REQUIRE(d.calls.size() == 1);
  CHECK(d.calls[0].arguments == R"({"a": 1})");
  ToolCallStream t;
  t.push("[citation needed]");
  d = t.finish();
  CHECK(d.calls.empty());
  CHECK(d.content == "[citation needed]");
}

TEST_CASE("tool calls: an answer that starts with '[' but is no call list still streams its Hermes calls") {
  // Found by fuzz_tool_calls' invariant (streamed == whole parse): the stream held such an answer
  // as a Python-call list and released it all as content, while the non-streamed response
  // returned the call. fuzz/corpus/tool_calls/regress-python-start-then-hermes.txt
  const std::string text = "[1, 2] <tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call> done";
  const auto whole = parse_tool_calls(text);
  REQUIRE(whole.calls.size() == 1);
  CHECK(whole.content == "[1, 2]  done");
  for (const std::size_t step : {std::size_t{1}, std::size_t{5}, text.size()}) {
    CAPTURE(step);
    const auto r = stream_in_pieces(text, step);
    REQUIRE(r.calls.size() == 1);
    CHECK(r.calls[0].name == "f");
    CHECK(r.calls[0].arguments == R"({"a": 1})");
    CHECK(r.content == "[1, 2]  done");
  }
  ToolCallStream unclosed;  // the held text ends inside a call: that call is still read at the end
  unclosed.push("[x] <tool_call>{\"name\": \"g\"}");
  const auto d = unclosed.finish();
  REQUIRE(d.calls.size() == 1);
  CHECK(d.calls[0].name == "g");
  CHECK(d.content == "[x] ");
  CHECK(unclosed.calls_emitted() == 1);
}

TEST_CASE("tool calls: output nested 100,000 deep stays text instead of overflowing the stack") {
  // A prompt can make the model emit '[' until max_tokens: the Python-call parser recursed once
  // per level and printing Hermes arguments does too, so such an answer crashed atlas-serve.
  const std::string deep(100000, '['), shut(100000, ']');
  const std::string py = "[f(a=" + deep + shut + ")]";
  std::vector<ToolCall> calls;
  CHECK_FALSE(parse_pythonic_calls(py, calls));
  const auto r = parse_tool_calls(py);
  CHECK(r.calls.empty());
  CHECK(r.content == py);
  const std::string hermes = "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": " + deep + shut + "}}</tool_call>";
  const auto h = parse_tool_calls(hermes);
  CHECK(h.calls.empty());
  CHECK(h.content == hermes);
  const auto streamed = stream_in_pieces(hermes, 4096);
  CHECK(streamed.calls.empty());
  CHECK(streamed.content == hermes);
  // 200 levels (beyond any real schema, below the limit of 256) still parse.
  CHECK(parse_pythonic_calls("[f(a=" + std::string(200, '[') + std::string(200, ']') + ")]", calls));
  CHECK(parse_tool_calls("<tool_call>{\"name\": \"g\", \"arguments\": {\"a\": " + std::string(200, '[') + std::string(200, ']') + "}}</tool_call>").calls.size() == 1);
}

TEST_CASE("tool_calls_json: OpenAI shape with ids") {
  const auto j = tool_calls_json({{"f", "{}"}, {"g", R"({"a": 1})"}}, "call_7_", 0);
  REQUIRE(j.size() == 2);
  CHECK(j[1]["id"] == "call_7_1");
  CHECK(j[1]["type"] == "function");
  CHECK(j[1]["function"]["name"] == "g");
  CHECK(j[1]["function"]["arguments"] == R"({"a": 1})");
}

#endif
