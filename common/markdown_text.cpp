#include "common/markdown_text.hpp"

#include <algorithm>

namespace atlas {

std::string md_text(std::string_view s) {
  // Only what can link, mention, embed or break the table is escaped; emphasis characters are
  // left alone, so "us_per_token" still reads as itself in the raw file.
  std::string out;
  out.reserve(s.size());
  auto at = [&](std::size_t i, std::string_view what) { return s.substr(i, what.size()) == what; };
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '@') {
      out += "&#64;";
    } else if (c == '[') {
      out += "&#91;";
    } else if (c == ']') {
      out += "&#93;";
    } else if (c == '`') {
      out += "&#96;";
    } else if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else if (c == ':' && at(i, "://")) {
      out += "&#58;";  // no autolinked scheme://
    } else if (c == '.' && i >= 3 && (s.substr(i - 3, 3) == "www" || s.substr(i - 3, 3) == "WWW")) {
      out += "&#46;";  // "www." is autolinked without a scheme
    } else {
      out += c;
    }
  }
  return out;
}

std::string md_code(std::string_view s) {
  std::string body;
  std::size_t run = 0, longest = 0;
  for (const char c : s) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    if (c == '|') {
      body += "\\|";
    } else if (c == '\n' || c == '\r') {
      body += ' ';
    } else {
      body += c;
    }
  }
  const std::string fence(longest + 1, '`');
  // A space on each side when the content starts or ends with a backtick (CommonMark strips one).
  const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`');
  return fence + (pad ? " " : "") + body + (pad ? " " : "") + fence;
}

}  // namespace atlas
