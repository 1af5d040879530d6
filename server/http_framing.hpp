#pragma once
// Request framing checks of RFC 9112 that cpp-httplib (Debian's 0.11.4) does not make, run
// before routing (Server's pre-routing handler), i.e. after httplib has parsed the request line
// and headers and before it reads any body byte. A request that fails one is answered and its
// connection closed (`Connection: close`): once the framing is in doubt, the bytes after the
// headers are no request boundary (request smuggling). This is a check in front of httplib's
// parser, not a parser of our own: the body is still read by httplib, which now only ever sees
// a Content-Length alone or `Transfer-Encoding: chunked` alone.
//
// Rules (RFC 9112 sections):
//  - §3.2: an HTTP/1.1 request without Host, or with more than one Host line: 400.
//  - §6.1: Transfer-Encoding in an HTTP/1.0 request: 400 (faulty framing).
//  - §6.1 / §6.3 item 3: Transfer-Encoding together with Content-Length: 400 (the server MAY
//    reject it and MUST close either way; httplib would take the chunked body and leave the
//    rest of the Content-Length on the connection as the next request).
//  - §6.1: a transfer coding other than chunked (gzip, compress, deflate, unknown): 501.
//    chunked more than once (§7), or an empty Transfer-Encoding: 400.
//  - §6.3 item 5, §8.6: Content-Length values (several lines, or a comma list) that are not all
//    the same decimal number: 400. Identical repeats are accepted as one value (§8.6 allows it).
#include <cstdint>
#include <optional>

#include <httplib.h>

#include "server/api_error.hpp"

namespace atlas::server {

struct Framing {
  std::optional<std::uint64_t> content_length;  ///< the one Content-Length value, when given
  bool chunked = false;                         ///< Transfer-Encoding: chunked
};

/// The request's framing, or the ApiError to answer (then close the connection). A
/// Content-Length past 2^64 - 1 is 413 (`body_too_large`, as any length over the body limit).
struct FramingCheck {
  Framing framing;
  std::optional<ApiError> error;
};
FramingCheck check_framing(const httplib::Request& req);

}  // namespace atlas::server
