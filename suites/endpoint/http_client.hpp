#pragma once
// A blocking HTTP/1.1 client over libcurl's multi interface that streams the response body to a
// callback with the arrival time of every read, and enforces three timeouts itself (connect,
// first byte, idle gap between bytes) besides a total one, so a hung or stalled server ends a
// request within a few milliseconds of its deadline instead of curl's ~1 s progress ticks.
// Arrival times are the kernel's receive time of the bytes where the platform gives it
// (rx_timestamp.hpp), else the time the client's thread read them.
// One HttpClient is used by one thread at a time; it keeps its connections alive between requests.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace atlas::suites::endpoint {

struct HttpTimeouts {
  std::chrono::milliseconds connect{5000};      ///< TCP connect
  std::chrono::milliseconds first_byte{60000};  ///< request sent -> first response byte
  std::chrono::milliseconds idle{60000};        ///< longest gap between two body reads
  std::chrono::milliseconds total{600000};      ///< request sent -> response complete
};

struct HttpRequest {
  std::string method = "GET";   ///< "GET" | "POST"
  std::string url;
  std::string body;             ///< sent as application/json when method is POST
  std::vector<std::string> headers;  ///< extra "Name: value" lines
  HttpTimeouts timeouts;
};

struct HttpResponse {
  bool ok = false;              ///< transport succeeded and the status is 2xx
  long status = 0;              ///< HTTP status; 0 when none arrived
  std::string error;            ///< why !ok (transport error, timeout, or "HTTP <status>: <body>")
  std::string body;             ///< the body when not streamed to on_data (non-2xx, or no callback)
  std::string content_type;
  std::int64_t t_sent_ns = 0;       ///< atlas::now_ns() before the request left
  std::int64_t t_first_byte_ns = 0; ///< first response byte (status line)
  std::int64_t t_end_ns = 0;
  std::size_t body_bytes = 0;
  /// Header/body callbacks whose arrival time is the kernel's receive time, and those that fell
  /// back to the read time (nothing peeked: first read after send, TLS-buffered data, no support).
  int kernel_stamped_reads = 0;
  int user_stamped_reads = 0;
};

/// Called for each body read of a 2xx response with the bytes, their arrival time and the
/// number of the client's wake-up (poll return) whose read delivered them (1, 2, ...): bytes of
/// one wake-up came in one go, and their stamps differ only by where the peek fell (bytes that
/// landed between the peek and the read get the read time), so a consumer that needs arrival
/// *gaps* treats them as one arrival (stream_timing.hpp). Returns false to abort the transfer
/// (HttpResponse.error then holds `abort_reason`).
using OnBody = std::function<bool(std::string_view bytes, std::int64_t t_ns, std::uint64_t wake)>;

class HttpClient {
 public:
  HttpClient();
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  /// Performs `req`. Never throws for transport or server failures: they are in the result.
  /// When `on_body` is empty the body is collected into HttpResponse.body (capped at 64 MiB).
  HttpResponse perform(const HttpRequest& req, const OnBody& on_body = {});
  /// Set by an OnBody callback before it returns false: the error reported for the abort.
  void set_abort_reason(std::string reason) { abort_reason_ = std::move(reason); }

 private:
  struct Handles;
  std::unique_ptr<Handles> h_;
  std::string abort_reason_;
};

/// True when this build has libcurl (ATLAS_HAVE_CURL); otherwise perform() always fails.
bool http_client_available();

}  // namespace atlas::suites::endpoint
