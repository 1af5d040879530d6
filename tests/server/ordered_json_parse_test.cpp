// parse_ordered_json (server/ordered_json_parse.hpp) gives the value nlohmann's parser gives,
// member order and duplicate keys included, and rejects what it rejects.
#include <string>

#include <doctest/doctest.h>

#include "server/ordered_json_parse.hpp"

using nlohmann::ordered_json;

TEST_CASE("parse_ordered_json: the same value as nlohmann's parser, order and duplicates included") {
  std::string many = "{";
  for (int i = 0; i < 100; ++i) many += (i ? ",\"k" : "\"k") + std::to_string(i % 40) + "\":" + std::to_string(i);  // 60 repeats past the index threshold
  many += ",\"tail\":[{\"b\":1,\"a\":2,\"b\":3}]}";
  const char* texts[] = {
      R"({"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4})",
      R"({"z": 1, "a": {"y": [1, 2.5, -3, 18446744073709551615, true, false, null, "s\u00e9"], "b": {}}, "m": []})",
      R"({"a": 1, "b": 2, "a": 3})",
      R"([[], {}, [[{"x": [{}]}]], "", 0])",
      R"("just a string")",
      R"(12)",
  };
  for (const char* t : texts) {
    CAPTURE(t);
    const auto got = atlas::server::parse_ordered_json(t);
    REQUIRE(got);
    CHECK(got->dump() == ordered_json::parse(t).dump());
  }
  const auto got = atlas::server::parse_ordered_json(many);
  REQUIRE(got);
  CHECK(got->dump() == ordered_json::parse(many).dump());
  CHECK(got->size() == 41);
  CHECK((*got)["k7"] == 87);                   // the last value ...
  CHECK(got->begin().key() == "k0");           // ... at the first position
  CHECK((*got)["tail"][0].dump() == R"({"b":3,"a":2})");
}

TEST_CASE("parse_ordered_json: invalid JSON is nullopt") {
  for (const char* t : {"", "{", R"({"a": })", R"({"a" 1})", "[1,]", "{\"a\": 1} x", "nul", "\"\xff\""}) {
    CAPTURE(t);
    CHECK(!atlas::server::parse_ordered_json(t));
  }
}

TEST_CASE("parse_ordered_json: an object of 200,000 members parses with each member once") {
  // nlohmann's ordered parse searches the members so far for every key (n^2 / 2 = 2e10
  // comparisons here, minutes of a core); the hostile burst test bounds the time of such a
  // request, this checks the value.
  std::string body = "{";
  for (int i = 0; i < 200000; ++i) body += (i ? ",\"" : "\"") + std::to_string(i) + "\":" + std::to_string(-i);
  body += "}";
  const auto got = atlas::server::parse_ordered_json(body);
  REQUIRE(got);
  CHECK(got->size() == 200000);
  CHECK((*got)["199999"] == -199999);
  CHECK(std::prev(got->end()).key() == "199999");
}
