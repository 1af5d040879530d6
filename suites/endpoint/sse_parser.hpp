#pragma once
// Incremental parser for a text/event-stream body (WHATWG HTML, "Server-sent events", section
// "Parsing an event stream"): lines end in CRLF, LF or CR; a field is `name:value` with one
// optional space after the colon; several `data` lines join with "\n"; a blank line dispatches
// the event; lines starting with ':' are comments (keep-alive pings). Bytes may be split
// anywhere across feed() calls, also inside a CRLF pair or a UTF-8 character: the parser only
// cuts at line ends, so multi-byte characters always reach the caller whole.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace atlas::suites::endpoint {

struct SseEvent {
  std::string event;  ///< the `event:` field; empty for the default "message"
  std::string data;   ///< `data:` lines joined with "\n" (OpenAI streams: one JSON object or "[DONE]")
};

class SseParser {
 public:
  /// `max_line_bytes` bounds one line so a server that never sends a line end cannot exhaust
  /// memory: feed() then reports overflow() and stops consuming.
  explicit SseParser(std::size_t max_line_bytes = 16u << 20) : max_line_bytes_(max_line_bytes) {}

  /// Consumes `bytes` and appends every event completed by them to `out`.
  void feed(std::string_view bytes, std::vector<SseEvent>& out);
  /// True when a line exceeded max_line_bytes (the stream is garbage; stop reading).
  bool overflow() const { return overflow_; }
  /// True when bytes of an unfinished line or event are buffered (a stream that ends here was
  /// cut off: the spec discards such an event).
  bool has_partial() const { return !line_.empty() || has_data_ || !event_.empty(); }
  /// Total bytes consumed.
  std::size_t bytes_seen() const { return bytes_seen_; }

 private:
  void process_line(std::string_view line, std::vector<SseEvent>& out);

  std::size_t max_line_bytes_;
  std::string line_;
  bool skip_lf_ = false;  ///< previous chunk ended in CR: a leading LF belongs to that CRLF
  bool at_start_ = true;  ///< a UTF-8 BOM at the very start is ignored
  bool overflow_ = false;
  std::string data_;
  bool has_data_ = false;
  std::string event_;
  std::size_t bytes_seen_ = 0;
};

}  // namespace atlas::suites::endpoint
