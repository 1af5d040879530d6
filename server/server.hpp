#pragma once
// The OpenAI-compatible HTTP server (cpp-httplib):
//   GET  /health                 200 {"status":"ok"}; 503 while draining
//   GET  /v1/models              the served model (id, max_model_len, provenance)
//   POST /v1/completions         prompt as text or token ids; stream: true -> SSE
//   POST /v1/chat/completions    messages (+ tools) through the chat template; SSE or JSON
//   POST /reset_prefix_cache     forget the KV-cache prefix (vLLM's route name)
// Streaming answers are `data: {json}\n\n` events ending with `data: [DONE]\n\n`, each token's
// event written as soon as the token is decoded (TCP_NODELAY). One request decodes at a time;
// up to queue_limit wait (FIFO); more get 429. Errors are OpenAI error objects (api_error.hpp).
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/completion.hpp"
#include "server/decode_queue.hpp"
#include "server/generator.hpp"
#include "server/connection_limits.hpp"
#include "server/csrf_guard.hpp"

namespace atlas::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;                            ///< 0 = an ephemeral port (see Server::port())
  std::string served_model_name = "model"; ///< the id /v1/models lists and requests must name
  int queue_limit = 8;                     ///< requests waiting behind the decoding one
  std::size_t max_body_bytes = 16u << 20;  ///< larger bodies get 413
  std::string chat_template;               ///< template source; "" = the model's, else the fallback
  int drain_timeout_ms = 60000;            ///< stop(): longest wait for in-flight requests; then they are stopped
  /// After the drain timeout: how long the stopped requests get to send their error, and again
  /// how long writes to clients that do not read then take to fail (stop() returns within
  /// drain_timeout_ms + 2 * abort_grace_ms plus one prefill in progress).
  int abort_grace_ms = 1000;
  ConnectionLimits connections;            ///< deadlines per request phase, connection cap
  /// Bearer tokens (api_keys.hpp): every route but GET /health needs one; empty = no
  /// authentication.
  std::vector<std::string> api_keys;
  /// Host names accepted besides IP literals, localhost and `host` ("*" = any); see csrf_guard.hpp.
  std::vector<std::string> allowed_hosts;
  /// Origins whose cross-origin requests are served, with CORS headers ("*" = any); empty =
  /// CORS off, a request with an Origin header gets 403.
  std::vector<std::string> allowed_origins;
};

struct ServerStats {
  std::uint64_t requests = 0;    ///< completion requests answered 200
  std::uint64_t rejected = 0;    ///< 429 (queue full) and 503 (draining)
  std::uint64_t bad = 0;         ///< 4xx other than 429
  std::uint64_t failed = 0;      ///< 500
  std::uint64_t cancelled = 0;   ///< completions whose client left while they decoded (decoding stopped)
  std::uint64_t aborted = 0;     ///< completions stopped by the drain timeout (answered 503 / an error event)
  std::size_t peak_connection_threads = 0;  ///< most connections served at once (a thread each)
};

class Server {
 public:
  /// Throws ServerError when the chat template does not parse.
  Server(Generator& gen, ServerOptions opts);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Binds and starts serving on a background thread; returns the port. Throws ServerError
  /// naming host:port when binding fails.
  int start();
  /// Drains: new requests get 503, in-flight and queued ones finish (up to drain_timeout_ms),
  /// then the listener closes. Idempotent; safe from any thread except a request handler.
  void stop();
  /// Blocks until stop() has finished.
  void wait();
  int port() const { return port_; }
  ServerStats stats() const;
  /// Which chat template is used: "model", "option" or "fallback".
  const std::string& chat_template_origin() const { return template_origin_; }

 private:
  struct Http;
  void install_routes();

  Generator& gen_;
  ServerOptions opts_;
  std::string template_origin_;
  CsrfGuard guard_;
  std::unique_ptr<CompletionRunner> runner_;
  DecodeQueue queue_;
  std::unique_ptr<Http> http_;
  std::thread listener_;
  std::atomic<bool> draining_{false};
  std::atomic<bool> aborting_{false};  // stop() waited drain_timeout_ms: decoding stops
  std::atomic<bool> started_{false};
  int port_ = 0;
  std::mutex stop_mu_;
  std::condition_variable stopped_cv_;
  bool stopped_ = false;
  std::atomic<std::uint64_t> n_ok_{0}, n_rejected_{0}, n_bad_{0}, n_failed_{0}, n_cancelled_{0}, n_aborted_{0};
};

}  // namespace atlas::server
