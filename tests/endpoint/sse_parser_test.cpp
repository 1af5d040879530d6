#include <doctest/doctest.h>

#include "suites/endpoint/sse_parser.hpp"

using atlas::suites::endpoint::SseEvent;
using atlas::suites::endpoint::SseParser;

namespace {
std::vector<SseEvent> parse_in_pieces(const std::string& s, const std::vector<std::size_t>& cuts) {
  SseParser p;
  std::vector<SseEvent> out;
  std::size_t prev = 0;
  for (std::size_t c : cuts) {
    p.feed(std::string_view(s).substr(prev, c - prev), out);
    prev = c;
  }
  p.feed(std::string_view(s).substr(prev), out);
  return out;
}
}  // namespace

TEST_CASE("SSE: LF, CRLF and CR line ends, data with and without the space, comments, multi-line data") {
  const std::string s =
      ": ping\n\n"
      "data: {\"a\":1}\n\n"
      "data:{\"b\":2}\r\n\r\n"
      "event: note\rdata: x\rdata:  y\r\r"
      "id: 7\nretry: 10\nunknown\ndata\n\n"
      "data: [DONE]\n\n";
  SseParser p;
  std::vector<SseEvent> ev;
  p.feed(s, ev);
  REQUIRE(ev.size() == 5);
  CHECK(ev[0].data == "{\"a\":1}");
  CHECK(ev[1].data == "{\"b\":2}");
  CHECK(ev[2].event == "note");
  CHECK(ev[2].data == "x\n y");  // only one space after the colon is removed
  CHECK(ev[3].data == "");       // a bare "data" line is an empty data field
  CHECK(ev[4].data == "[DONE]");
  CHECK_FALSE(p.has_partial());
}

TEST_CASE("SSE: events split at every byte position (and inside UTF-8 characters) parse the same") {
  // "é" and "→" are multi-byte; the CRLF pairs can be split between their CR and LF.
  const std::string s = "data: {\"t\":\"h\xC3\xA9\"}\r\n\r\n: c\r\ndata: \xE2\x86\x92x\n\ndata: [DONE]\r\n\r\n";
  SseParser whole;
  std::vector<SseEvent> expect;
  whole.feed(s, expect);
  REQUIRE(expect.size() == 3);
  CHECK(expect[0].data == "{\"t\":\"h\xC3\xA9\"}");
  CHECK(expect[1].data == "\xE2\x86\x92x");
  for (std::size_t i = 0; i <= s.size(); ++i) {
    for (std::size_t j = i; j <= s.size(); j += 3) {
      CAPTURE(i);
      CAPTURE(j);
      const auto got = parse_in_pieces(s, {i, j});
      REQUIRE(got.size() == expect.size());
      for (std::size_t k = 0; k < got.size(); ++k) CHECK(got[k].data == expect[k].data);
    }
  }
  // One byte at a time.
  std::vector<std::size_t> every(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) every[i] = i;
  const auto bytewise = parse_in_pieces(s, every);
  REQUIRE(bytewise.size() == 3);
  CHECK(bytewise[2].data == "[DONE]");
}

TEST_CASE("SSE: an unfinished event is not dispatched; a BOM at the start is ignored") {
  SseParser p;
  std::vector<SseEvent> ev;
  p.feed("\xEF\xBB\xBF" "data: a\n\ndata: cut off", ev);
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].data == "a");
  CHECK(p.has_partial());
  p.feed("\n", ev);
  CHECK(ev.size() == 1);  // needs the blank line
  CHECK(p.has_partial());
  p.feed("\n", ev);
  REQUIRE(ev.size() == 2);
  CHECK(ev[1].data == "cut off");
}

TEST_CASE("SSE: a line longer than the limit is reported as overflow, not buffered forever") {
  SseParser p(64);
  std::vector<SseEvent> ev;
  p.feed(std::string(40, 'x'), ev);
  CHECK_FALSE(p.overflow());
  p.feed(std::string(40, 'x'), ev);
  CHECK(p.overflow());
  p.feed("\n\ndata: late\n\n", ev);
  CHECK(ev.empty());
}
