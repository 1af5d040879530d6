#include "trends/html_text.hpp"

#include <cctype>

#include "trends/history.hpp"

namespace atlas::trends {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string file_stem(std::string_view text) {
  std::string out;
  bool replaced = false;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '.' || c == '_' || c == '-') {
      out += c;
    } else {
      out += '_';
      replaced = true;
    }
  }
  if (out.empty() || out[0] == '.') {
    out.insert(out.begin(), '_');
    replaced = true;
  }
  if (replaced) {
    out += '-';
    out += short_hash(std::string(text));
  }
  return out;
}

}  // namespace atlas::trends
