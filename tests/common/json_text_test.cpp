// JSON text for files people read (common/json_text.hpp): dump(2) down to kPrettyJsonLevels
// levels, one line per deeper container.
#include <doctest/doctest.h>

#include <string>

#include "common/json_text.hpp"

using atlas::dump_pretty;
using nlohmann::json;

TEST_CASE("dump_pretty: a shallow document is written exactly as dump(2) writes it") {
  const json j = json::parse(R"({"a": [], "b": {}, "c": [1, 2.5, "x\u00e9", null, true, {"d": {"e": [[1], {"f": []}]}}],
                                 "g\"h": {"i": -0.0, "j": 1e300}, "k": "\u0001"})");
  CHECK(dump_pretty(j) == j.dump(2));
  CHECK(dump_pretty(json(7)) == "7");
  CHECK(dump_pretty(json::array()) == "[]");
}

TEST_CASE("dump_pretty: containers deeper than kPrettyJsonLevels are written on one line") {
  std::string text = "0";
  for (int i = 0; i < atlas::kPrettyJsonLevels + 3; ++i) text = "[" + text + "]";
  const json j = json::parse(text);
  const std::string out = dump_pretty(j);
  CHECK(json::parse(out) == j);  // the same document
  // kPrettyJsonLevels levels indented, then the 3 deeper ones on one line.
  const std::string deepest = "[[[0]]]";
  CHECK(out.find(std::string(2 * static_cast<std::size_t>(atlas::kPrettyJsonLevels), ' ') + deepest + "\n") !=
        std::string::npos);
  CHECK(out.size() < j.dump(2).size());
  // Invalid UTF-8: strict throws as dump() does, replace writes U+FFFD.
  const json bad = std::string("\xff");
  CHECK_THROWS(dump_pretty(bad));
  CHECK(dump_pretty(bad, json::error_handler_t::replace) == "\"\xef\xbf\xbd\"");
}
