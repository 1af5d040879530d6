#include "server/csrf_guard.hpp"

#include <arpa/inet.h>

#include <algorithm>

namespace atlas::server {

namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

bool is_ip_literal(const std::string& h) {
  unsigned char buf[16];
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') return ::inet_pton(AF_INET6, h.substr(1, h.size() - 2).c_str(), buf) == 1;
  return ::inet_pton(AF_INET, h.c_str(), buf) == 1;
}

/// The host part of a Host header value ("name:port", "[v6]:port"), lowercase; "" when the
/// value is malformed.
std::string host_part(std::string_view v) {
  if (!v.empty() && v.front() == '[') {
    const auto close = v.find(']');
    if (close == std::string_view::npos) return {};
    const std::string_view rest = v.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || rest.size() == 1)) return {};
    return lower(v.substr(0, close + 1));
  }
  const auto colon = v.find(':');
  std::string_view name = v.substr(0, colon);
  if (colon != std::string_view::npos) {
    const std::string_view port = v.substr(colon + 1);
    if (port.empty() || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) return {};
  }
  // trailing dot: "localhost." names the same host
  if (!name.empty() && name.back() == '.') name.remove_suffix(1);
  return lower(name);
}

ApiError forbidden(std::string message, std::string code) {
  return ApiError{403, "invalid_request_error", std::move(message), "", std::move(code)};
}
}  // namespace

CsrfGuard::CsrfGuard(std::string_view bind_host, std::vector<std::string> allowed_hosts, std::vector<std::string> allowed_origins) {
  hosts_.push_back("localhost");
  const std::string b = lower(bind_host);
  if (!b.empty() && b != "0.0.0.0" && b != "::" && b != "[::]") hosts_.push_back(b);
  for (const auto& h : allowed_hosts) {
    if (h == "*") any_host_ = true;
    else hosts_.push_back(host_part(h).empty() ? lower(h) : host_part(h));
  }
  for (const auto& o : allowed_origins) {
    if (o == "*") any_origin_ = true;
    std::string l = lower(o);
    while (!l.empty() && l.back() == '/') l.pop_back();  // "http://x:3000/" is the origin http://x:3000
    origins_.push_back(std::move(l));
  }
}

std::optional<ApiError> CsrfGuard::check_host(std::string_view host) const {
  if (host.empty() || any_host_) return std::nullopt;
  const std::string h = host_part(host);
  if (h.empty()) return ApiError{400, "invalid_request_error", "the Host header '" + std::string(host.substr(0, 80)) + "' is malformed", "", "invalid_host"};
  if (is_ip_literal(h) || std::find(hosts_.begin(), hosts_.end(), h) != hosts_.end()) return std::nullopt;
  if (h.size() > 10 && h.ends_with(".localhost")) return std::nullopt;  // RFC 6761: always loopback
  return forbidden("the Host '" + std::string(host.substr(0, 80)) +
                       "' is not this server's address (a DNS rebinding page sends its own name); start atlas-serve with "
                       "--allowed-host NAME to accept it",
                   "host_not_allowed");
}

bool CsrfGuard::cors_allows(std::string_view origin) const {
  if (any_origin_) return true;
  return std::find(origins_.begin(), origins_.end(), lower(origin)) != origins_.end();
}

std::optional<ApiError> CsrfGuard::check_origin(const std::optional<std::string>& origin) const {
  if (!origin || cors_allows(*origin)) return std::nullopt;
  return forbidden("cross-origin requests from '" + origin->substr(0, 80) +
                       "' are refused (CORS is off by default); start atlas-serve with --allowed-origin ORIGIN to allow them",
                   "origin_not_allowed");
}

std::optional<ApiError> CsrfGuard::check_content_type(std::string_view content_type) {
  std::string_view media = content_type.substr(0, content_type.find(';'));
  while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) media.remove_suffix(1);
  while (!media.empty() && (media.front() == ' ' || media.front() == '\t')) media.remove_prefix(1);
  if (lower(media) == "application/json") return std::nullopt;
  return ApiError{415, "invalid_request_error",
                  content_type.empty() ? std::string("the request body needs Content-Type: application/json")
                                       : "Content-Type '" + std::string(content_type.substr(0, 80)) + "' is not supported; send application/json",
                  "", "unsupported_media_type"};
}

}  // namespace atlas::server
