#pragma once
// Defences against a web page driving atlas-serve from the browser of a user on the same host
// (cross-site request forgery, DNS rebinding). A page cannot read a cross-origin answer, but
// without these checks it could still send completions (costing the server's time) or reset
// the prefix cache with a `text/plain` POST, a "simple" request that needs no CORS preflight;
// and with DNS rebinding (a name of the attacker's that resolves to 127.0.0.1) it could read
// the answers too. Three checks, in the spirit of Ollama's allowed hosts and OLLAMA_ORIGINS:
//  - Host: its host part must be an IP literal, `localhost`, the bound address, or a name in
//    the allow list (`--allowed-host`; `*` allows any). A rebinding page's Host is the
//    attacker's name, never one of these. Otherwise 403 `host_not_allowed`.
//  - Origin: a request that carries one (browsers send it on every cross-origin POST and on
//    CORS requests; command-line clients and SDKs send none) must name an allowed origin
//    (`--allowed-origin`, exact, `*` allows any). Otherwise 403 `origin_not_allowed`. CORS is
//    off unless origins are allowed; then their answers carry Access-Control-Allow-Origin and
//    OPTIONS preflights are answered.
//  - Content-Type: a POST with a body must be `application/json` (parameters such as charset
//    allowed), which a browser cannot send cross-origin without a preflight. Otherwise 415.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/api_error.hpp"

namespace atlas::server {

class CsrfGuard {
 public:
  /// `bind_host` is the listen address (--host); 0.0.0.0 and :: add nothing (any address of
  /// the machine may be used: give its names with --allowed-host). Names are compared
  /// case-insensitively, without the port.
  CsrfGuard(std::string_view bind_host, std::vector<std::string> allowed_hosts, std::vector<std::string> allowed_origins);

  /// `host` is the Host header's value ("" when absent: HTTP/1.0, allowed).
  std::optional<ApiError> check_host(std::string_view host) const;
  /// `origin` is the Origin header's value (nullopt when absent).
  std::optional<ApiError> check_origin(const std::optional<std::string>& origin) const;
  /// For a POST with a body: `content_type` is the Content-Type header ("" when absent).
  static std::optional<ApiError> check_content_type(std::string_view content_type);
  /// Whether answers to `origin` carry CORS headers (it is allowed).
  bool cors_allows(std::string_view origin) const;
  bool cors_enabled() const { return !origins_.empty(); }

 private:
  std::vector<std::string> hosts_;    // lowercase
  std::vector<std::string> origins_;  // lowercase
  bool any_host_ = false, any_origin_ = false;
};

}  // namespace atlas::server
