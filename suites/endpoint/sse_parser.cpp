#include "suites/endpoint/sse_parser.hpp"

namespace atlas::suites::endpoint {

void SseParser::feed(std::string_view bytes, std::vector<SseEvent>& out) {
  if (overflow_) return;
  bytes_seen_ += bytes.size();
  std::size_t i = 0;
  if (skip_lf_ && !bytes.empty()) {
    if (bytes[0] == '\n') i = 1;
    skip_lf_ = false;
  }
  while (i < bytes.size()) {
    std::size_t end = i;
    while (end < bytes.size() && bytes[end] != '\n' && bytes[end] != '\r') ++end;
    line_.append(bytes.data() + i, end - i);
    if (line_.size() > max_line_bytes_) {
      overflow_ = true;
      return;
    }
    if (end == bytes.size()) break;  // the line continues in the next chunk
    if (bytes[end] == '\r') {
      if (end + 1 < bytes.size()) {
        if (bytes[end + 1] == '\n') ++end;
      } else {
        skip_lf_ = true;
      }
    }
    if (at_start_) {
      at_start_ = false;
      if (line_.rfind("\xEF\xBB\xBF", 0) == 0) line_.erase(0, 3);
    }
    process_line(line_, out);
    line_.clear();
    i = end + 1;
  }
}

void SseParser::process_line(std::string_view line, std::vector<SseEvent>& out) {
  if (line.empty()) {
    if (has_data_) out.push_back({event_, data_});
    data_.clear();
    has_data_ = false;
    event_.clear();
    return;
  }
  if (line.front() == ':') return;  // comment
  std::string_view field = line, value;
  if (auto colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_.assign(value);
  }
  // "id" and "retry" do not matter to a benchmark client; unknown fields are ignored (spec).
}

}  // namespace atlas::suites::endpoint
