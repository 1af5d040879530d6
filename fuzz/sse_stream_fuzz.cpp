// The client side of a streamed response: the SSE parser (suites/endpoint/sse_parser.hpp) fed
// the body in chunks cut where the input's first byte says, and the OpenAI stream decoder over
// the events. The events must not depend on where the chunks were cut (the parser's contract).
#include <vector>

#include "fuzz/fuzz_target.hpp"
#include "suites/endpoint/openai_stream.hpp"
#include "suites/endpoint/sse_parser.hpp"

namespace {
bool same(const std::vector<atlas::suites::endpoint::SseEvent>& a, const std::vector<atlas::suites::endpoint::SseEvent>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].event != b[i].event || a[i].data != b[i].data) return false;
  }
  return true;
}
}  // namespace

ATLAS_FUZZ_TARGET(sse_stream) {
  using namespace atlas::suites::endpoint;
  if (size == 0) return 0;
  const std::size_t step = 1 + data[0] % 17;
  const std::string_view body = atlas::fuzz::text(data + 1, size - 1);
  std::vector<SseEvent> whole, chunked;
  SseParser a(4096), b(4096);
  a.feed(body, whole);
  for (std::size_t at = 0; at < body.size(); at += step) b.feed(body.substr(at, step), chunked);
  atlas::fuzz::check(a.overflow() == b.overflow(), "overflow does not depend on chunking");
  if (!a.overflow()) {
    atlas::fuzz::check(same(whole, chunked), "events do not depend on chunking");
    atlas::fuzz::check(a.has_partial() == b.has_partial(), "has_partial does not depend on chunking");
  }
  atlas::fuzz::check(a.bytes_seen() <= body.size(), "bytes_seen within the body");
  OpenAiStreamReader r;
  std::int64_t t = 0;
  for (const auto& ev : whole) r.on_event(ev, t += 1000);
  (void)r.tool_calls();
  atlas::fuzz::check(r.chunks().size() <= whole.size(), "at most one content chunk per event");
  return 0;
}
