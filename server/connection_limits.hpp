#pragma once
// atlas-serve's limits on how long a client may take to send a request and how many
// connections are served at once (server/http_connection.hpp applies them).
#include <cstddef>

namespace atlas::server {

struct ConnectionLimits {
  int idle_timeout_ms = 5000;                 ///< wait for a request's first byte (keep-alive, and after accept)
  int header_timeout_ms = 10000;              ///< request line + headers, from their first byte
  std::size_t max_header_bytes = 64u << 10;   ///< request line + headers; more closes the connection
  int body_timeout_ms = 10000;                ///< body, from the end of the headers ...
  std::size_t min_body_rate = 64u << 10;      ///< ... plus 1 s per this many bytes received (bytes/s)
  int write_timeout_ms = 10000;               ///< a response write without progress this long fails
  std::size_t max_connections = 1024;         ///< connections served at once (a thread each)
  int thread_idle_exit_ms = 2000;             ///< an idle connection thread exits after this long
  /// Under pressure (max_connections reached, connections waiting for a thread) the idle and
  /// request deadlines shrink to these, so that slow clients give their threads back within
  /// about a second and the waiting connections (/health among them) are served.
  int pressure_idle_ms = 250;
  int pressure_request_ms = 1000;
  /// After a response sent before its request's body was read (413, 411), the connection
  /// reads and discards what the client still sends for up to this long / this many bytes
  /// before it closes (a lingering close; closing with unread input makes the kernel reset the
  /// connection, and the client loses the response).
  int linger_ms = 1000;
  std::size_t linger_max_bytes = 64u << 20;
};

}  // namespace atlas::server
