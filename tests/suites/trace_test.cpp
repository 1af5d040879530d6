#include <doctest/doctest.h>

#include <fstream>

#include "suites/agentic/trace.hpp"
#include "suites/error.hpp"
#include "suites/resources.hpp"
#include "tests/test_data.hpp"

using namespace atlas::suites;
using nlohmann::json;

namespace {
json minimal() {
  return json::parse(R"({
    "format": "atlas-agentic-trace", "version": 1, "name": "t",
    "system": "sys",
    "tools": [{"type": "function", "function": {"name": "grep", "parameters": {"type": "object", "properties": {"pattern": {}}}}}],
    "turns": [
      {"role": "user", "text": "hi"},
      {"role": "assistant", "max_tokens": 4},
      {"role": "tool", "name": "grep", "tokens": 10, "think_ms": 5},
      {"role": "assistant", "max_tokens": 2}
    ]})");
}
std::string error_of(const json& j) {
  try {
    parse_trace(j, "traces/x.json");
  } catch (const SuiteError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("a valid trace parses into messages") {
  const AgenticTrace t = parse_trace(minimal(), "mem");
  CHECK(t.name == "t");
  CHECK(t.system == "sys");
  REQUIRE(t.messages.size() == 4);
  CHECK(t.messages[0].role == TraceRole::user);
  CHECK(*t.messages[0].text == "hi");
  CHECK(t.messages[1].max_tokens == 4);
  CHECK(t.messages[2].name == "grep");
  CHECK(*t.messages[2].tokens == 10);
  CHECK(t.messages[2].think_ms == 5.0);
  CHECK(t.assistant_turns() == 2);
}

TEST_CASE("malformed traces name the file and the field") {
  json j = minimal();
  j["turns"][1]["max_tokens"] = "many";
  CHECK(error_of(j) == "traces/x.json: turns[1].max_tokens must be an integer >= 1, got \"many\"");

  j = minimal();
  j["turns"][2].erase("name");
  CHECK(error_of(j) == "traces/x.json: turns[2].name is required");

  j = minimal();
  j["turns"][2]["text"] = "both";
  CHECK(error_of(j) == "traces/x.json: turns[2].text exactly one of text or tokens is required");

  j = minimal();
  j["format"] = "other";
  CHECK(error_of(j) == "traces/x.json: format must be \"atlas-agentic-trace\", got \"other\"");

  j = minimal();
  j["turns"].push_back({{"role", "user"}, {"text", "dangling"}});
  CHECK(error_of(j).find("turns[4].role must be \"assistant\"") != std::string::npos);

  j = minimal();
  j["turns"][0]["role"] = "robot";
  CHECK(error_of(j) == "traces/x.json: turns[0].role must be \"user\", \"tool\" or \"assistant\", got \"robot\"");

  j = minimal();
  j["turns"][2]["think_ms"] = -1;
  CHECK(error_of(j) == "traces/x.json: turns[2].think_ms must be a number >= 0, got -1");

  j = minimal();
  j["turns"][3]["colour"] = 1;
  CHECK(error_of(j) == "traces/x.json: turns[3].colour is not a turn field");

  j = minimal();
  j["turns"].insert(j["turns"].begin() + 2, json{{"role", "assistant"}, {"max_tokens", 1}});
  CHECK(error_of(j) == "traces/x.json: turns[2].role assistant must follow a user or tool message, got \"assistant\"");
}

TEST_CASE("a trace file with broken JSON names the file") {
  const auto dir = atlas::test::scratch_dir("trace_broken");
  std::ofstream(dir / "broken.json") << "{\"format\": ";
  CHECK_THROWS_WITH(load_trace(dir / "broken.json"), doctest::Contains("broken.json"));
}

TEST_CASE("the shipped traces parse") {
  for (const char* name : {"coding-agent", "retrieval-agent", "coding-agent-long"}) {
    const AgenticTrace t = load_trace(resolve_resource(name, "traces"));
    CHECK(t.name == name);
    CHECK(t.assistant_turns() >= 5);
  }
}
