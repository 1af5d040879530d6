#include "chat/jinja_segments.hpp"

#include <algorithm>

#include "chat/jinja_value.hpp"

namespace atlas::chat::jinja {

namespace {
int count_lines(const std::string& s, std::size_t from, std::size_t to) {
  return static_cast<int>(std::count(s.begin() + static_cast<long>(from), s.begin() + static_cast<long>(to), '\n'));
}
}  // namespace

std::vector<Segment> split_template(const std::string& src) {
  std::vector<Segment> segs;
  std::size_t pos = 0;
  int line = 1;
  while (pos < src.size()) {
    std::size_t open = src.find('{', pos);
    while (open != std::string::npos && open + 1 < src.size() && src[open + 1] != '{' && src[open + 1] != '%' &&
           src[open + 1] != '#') {
      open = src.find('{', open + 1);
    }
    if (open == std::string::npos || open + 1 >= src.size()) {
      segs.push_back({Segment::text, src.substr(pos), line});
      break;
    }
    if (open > pos) segs.push_back({Segment::text, src.substr(pos, open - pos), line});
    line += count_lines(src, pos, open);
    const char k = src[open + 1];
    Segment seg;
    seg.line = line;
    seg.kind = k == '{' ? Segment::expr : k == '%' ? Segment::stmt : Segment::comment;
    const std::string close = k == '{' ? "}}" : k == '%' ? "%}" : "#}";
    std::size_t body_start = open + 2;
    if (body_start < src.size() && src[body_start] == '-') {
      seg.strip_left = true;
      ++body_start;
    } else if (body_start < src.size() && src[body_start] == '+') {
      seg.keep_left = true;
      ++body_start;
    }
    // Find the closing delimiter outside string literals (comments have no strings).
    std::size_t i = body_start;
    char quote = 0;
    std::size_t end = std::string::npos;
    for (; i + 1 < src.size(); ++i) {
      const char c = src[i];
      if (seg.kind != Segment::comment) {
        if (quote) {
          if (c == '\\') {
            ++i;
            continue;
          }
          if (c == quote) quote = 0;
          continue;
        }
        if (c == '\'' || c == '"') {
          quote = c;
          continue;
        }
      }
      if (src.compare(i, 2, close) == 0) {
        end = i;
        break;
      }
    }
    if (end == std::string::npos) fail(line, "unclosed '" + src.substr(open, 2) + "'");
    std::size_t body_end = end;
    if (body_end > body_start && src[body_end - 1] == '-') {
      seg.strip_right = true;
      --body_end;
    }
    seg.body = src.substr(body_start, body_end - body_start);
    line += count_lines(src, open, end + 2);
    segs.push_back(std::move(seg));
    pos = end + 2;
  }
  // Whitespace control: explicit '-' strips all whitespace; for block tags transformers'
  // trim_blocks drops the first newline after the tag and lstrip_blocks drops spaces/tabs
  // between the line start and the tag.
  auto is_ws = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  // Left sides first: lstrip_blocks looks for the line start in the source text, before
  // trim_blocks of the previous tag has removed that line's newline.
  for (std::size_t s = 1; s < segs.size(); ++s) {
    const Segment& tag = segs[s];
    if (tag.kind == Segment::text || segs[s - 1].kind != Segment::text) continue;
    std::string& prev = segs[s - 1].body;
    if (tag.strip_left) {
      while (!prev.empty() && is_ws(prev.back())) prev.pop_back();
    } else if (tag.kind != Segment::expr && !tag.keep_left) {
      const std::size_t nl = prev.find_last_of('\n');
      const std::size_t from = nl == std::string::npos ? 0 : nl + 1;
      const bool at_line_start = nl != std::string::npos || s == 1;
      if (at_line_start && prev.find_first_not_of(" \t", from) == std::string::npos) prev.resize(from);
    }
  }
  for (std::size_t s = 0; s + 1 < segs.size(); ++s) {
    const Segment& tag = segs[s];
    if (tag.kind == Segment::text || segs[s + 1].kind != Segment::text) continue;
    std::string& next = segs[s + 1].body;
    if (tag.strip_right) {
      std::size_t k = 0;
      while (k < next.size() && is_ws(next[k])) ++k;
      next.erase(0, k);
    } else if (tag.kind != Segment::expr) {
      if (next.rfind("\r\n", 0) == 0) next.erase(0, 2);
      else if (next.rfind("\n", 0) == 0) next.erase(0, 1);
    }
  }
  return segs;
}

}  // namespace atlas::chat::jinja
