#include "server/http_framing.hpp"

#include <charconv>
#include <string>
#include <string_view>
#include <vector>

namespace atlas::server {

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// Every element of every `name` line, split at commas, trimmed; empty elements dropped
/// (RFC 9110 §5.6.1: recipients accept and ignore them).
std::vector<std::string> list_values(const httplib::Request& req, const char* name) {
  std::vector<std::string> out;
  const auto range = req.headers.equal_range(name);
  for (auto it = range.first; it != range.second; ++it) {
    std::string_view v = it->second;
    while (true) {
      const auto comma = v.find(',');
      const std::string_view e = trim(v.substr(0, comma));
      if (!e.empty()) out.emplace_back(e);
      if (comma == std::string_view::npos) break;
      v.remove_prefix(comma + 1);
    }
  }
  return out;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

ApiError framing_error(int status, std::string message, std::string code) {
  return ApiError{status, status == 501 ? "server_error" : "invalid_request_error", std::move(message), "", std::move(code)};
}
}  // namespace

FramingCheck check_framing(const httplib::Request& req) {
  FramingCheck out;
  const std::size_t hosts = req.get_header_value_count("Host");
  if (req.version == "HTTP/1.1" && hosts == 0) {
    out.error = framing_error(400, "an HTTP/1.1 request must have a Host header (RFC 9112 section 3.2)", "missing_host");
    return out;
  }
  if (hosts > 1) {
    out.error = framing_error(400, "the request has " + std::to_string(hosts) + " Host headers; one is allowed (RFC 9112 section 3.2)",
                              "invalid_host");
    return out;
  }
  const bool has_te = req.has_header("Transfer-Encoding");
  const bool has_cl = req.has_header("Content-Length");
  if (has_te) {
    if (req.version == "HTTP/1.0") {
      out.error = framing_error(400, "Transfer-Encoding is not allowed in an HTTP/1.0 request (RFC 9112 section 6.1)",
                                "invalid_transfer_encoding");
      return out;
    }
    if (has_cl) {
      out.error = framing_error(400,
                                "the request has both Content-Length and Transfer-Encoding; its length is ambiguous "
                                "(RFC 9112 section 6.1): send one of them",
                                "ambiguous_length");
      return out;
    }
    const std::vector<std::string> codings = list_values(req, "Transfer-Encoding");
    int chunked = 0;
    for (const std::string& c : codings) {
      if (lower(c) == "chunked") {
        ++chunked;
      } else {
        out.error = framing_error(501, "Transfer-Encoding '" + c.substr(0, 40) + "' is not supported; only chunked is (RFC 9112 section 6.1)",
                                  "unsupported_transfer_encoding");
        return out;
      }
    }
    if (chunked != 1) {
      out.error = framing_error(400,
                                chunked == 0 ? "Transfer-Encoding is empty" : "Transfer-Encoding lists chunked more than once (RFC 9112 section 7)",
                                "invalid_transfer_encoding");
      return out;
    }
    out.framing.chunked = true;
    return out;
  }
  if (has_cl) {
    const std::vector<std::string> values = list_values(req, "Content-Length");
    if (values.empty()) {
      out.error = framing_error(400, "Content-Length is empty", "invalid_content_length");
      return out;
    }
    for (const std::string& v : values) {
      std::uint64_t n = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec == std::errc::result_out_of_range) {
        out.error = ApiError{413, "invalid_request_error", "Content-Length '" + v.substr(0, 40) + "' is not a byte count that fits 64 bits", "",
                             "body_too_large"};
        return out;
      }
      if (ec != std::errc() || end != v.data() + v.size()) {
        out.error = framing_error(400, "Content-Length '" + v.substr(0, 40) + "' is not a byte count", "invalid_content_length");
        return out;
      }
      if (out.framing.content_length && *out.framing.content_length != n) {
        out.error = framing_error(400,
                                  "the request has differing Content-Length values (" + std::to_string(*out.framing.content_length) + " and " +
                                      std::to_string(n) + "; RFC 9112 section 6.3)",
                                  "invalid_content_length");
        return out;
      }
      out.framing.content_length = n;
    }
  }
  return out;
}

}  // namespace atlas::server
