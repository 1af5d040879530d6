#pragma once
// EndpointTarget: drives any OpenAI-compatible server (atlas-serve, vLLM, SGLang, llama.cpp
// server) over HTTP with streaming (SSE) and times every request from the client:
//   t_request_ns     the request is handed to the socket (not when a concurrency slot frees)
//   t_first_byte_ns  first response byte (TTFB)
// Every arrival time is the kernel's receive time of the bytes where the platform gives it
// (rx_timestamp.hpp), else the time the client read them; provenance() counts both.
//   token_t_ns       arrival of each generated token; the first is the first token-bearing SSE
//                    event (TTFT), later ones give ITL/TPOT (see stream_timing.hpp)
//   t_end_ns         `data: [DONE]` (or the last byte when the stream ends without it)
// Token counts come from the response's `usage` (requested with stream_options.include_usage),
// else from the local tokenizer. Every failure (transport, timeout, HTTP status, malformed SSE)
// is returned per request in TargetResponse.ok/error; nothing is retried unless asked.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/tokenizer/tokenizer.hpp"
#include "suites/endpoint/http_client.hpp"
#include "suites/target.hpp"

namespace atlas::suites::endpoint {

struct EndpointOptions {
  std::string url;            ///< base URL with the API prefix, e.g. http://127.0.0.1:8000/v1
  std::string api_key_env;    ///< environment variable holding a bearer token ("" = none)
  std::string served_model;   ///< model name for requests; "" = the first id GET /models lists
  /// Local tokenizer: builds prompts (Target::tokenizer) and counts tokens when the server sends
  /// no usage. Null: token counts need usage, and tokenizer() throws EndpointError.
  std::shared_ptr<const engine::Tokenizer> tokenizer;
  int context_length = 0;     ///< 0: the `max_model_len` GET /models reports (vLLM, atlas-serve)
  HttpTimeouts timeouts;
  int retries = 0;            ///< extra attempts for a request that got no byte or a 429/503
};

class EndpointTarget final : public Target {
 public:
  /// Contacts GET <url>/models. Throws EndpointError when it fails, when the API-key variable is
  /// unset, or when `served_model` is not listed.
  explicit EndpointTarget(EndpointOptions opts);
  ~EndpointTarget() override;

  std::string name() const override { return "endpoint:" + opts_.url; }
  /// Thread-safe: concurrent calls use separate connections (load generation).
  TargetResponse generate(const TargetRequest& req) override;
  /// POST <root>/reset_prefix_cache (vLLM's and atlas-serve's route); the outcome is recorded
  /// in provenance()["reset_prefix_cache"], a server without it is not an error.
  void reset_session() override;
  const engine::Tokenizer& tokenizer() const override;
  int context_length() const override { return context_length_; }
  nlohmann::json provenance() const override;

  const std::string& served_model() const { return model_; }
  /// The JSON body generate() sends for `req` (exposed for tests and --dry-run).
  nlohmann::json request_body(const TargetRequest& req) const;

 private:
  std::unique_ptr<HttpClient> take_client();
  void give_back(std::unique_ptr<HttpClient> c);
  TargetResponse attempt(const TargetRequest& req, HttpClient& client);
  std::vector<std::string> auth_headers() const;

  EndpointOptions opts_;
  std::string api_key_;
  std::string model_;
  int context_length_ = 0;
  nlohmann::json models_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<HttpClient>> idle_clients_;
  std::string reset_outcome_ = "not used";
  long long kernel_stamped_reads_ = 0;  ///< response reads timed by the kernel's receive time
  long long user_stamped_reads_ = 0;    ///< response reads timed when the client read them
};

/// The factory `atlas-bench run --endpoint URL` uses.
std::unique_ptr<Target> make_endpoint_target(const EndpointOptions& opts);

/// The server root for non-/v1 routes: "http://h:p/v1" -> "http://h:p".
std::string endpoint_root(const std::string& url);

}  // namespace atlas::suites::endpoint
