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
// else from the local tokenizer; token ids from the server where it lists them
// (openai_stream.hpp says where each server shape puts them). Every failure (transport, timeout, HTTP status, malformed SSE)
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
  /// 0: what the server reports: `max_model_len` in GET /models (vLLM, SGLang, atlas-serve),
  /// else `meta.n_ctx` there (llama.cpp: the per-slot context), else llama.cpp's GET /props
  /// `default_generation_settings.n_ctx`; 0 when none does (suites then ask for the option).
  int context_length = 0;
  /// Server family, for the fields it understands: "vllm", "sglang", "llamacpp", "trtllm",
  /// "atlas-serve", "openai" (none of the extensions). "" = from /v1/models `owned_by`.
  std::string server_kind;
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
  /// POST <root>/reset_prefix_cache (vLLM's, SGLang's flush_cache aside, and atlas-serve's
  /// route); the outcome is recorded in provenance()["reset_prefix_cache"]. A server without it
  /// (404/405/501) is not an error and is not asked again: cold requests do not rely on it
  /// (they carry a unique prefix, cold_salt(), and are checked against cached_tokens).
  void reset_session() override;
  /// 0 after a reset the server accepted (its cache is empty: prompts stay as in process, so
  /// reuse figures compare exactly) and for llama.cpp, which skips its cache for a cold request
  /// (`cache_prompt: false`); a random per-target value before any reset and when the server
  /// has neither.
  std::uint64_t cold_salt() const override;
  const engine::Tokenizer& tokenizer() const override;
  int context_length() const override { return context_length_; }
  nlohmann::json provenance() const override;

  const std::string& served_model() const { return model_; }
  const std::string& server_kind() const { return kind_; }
  /// Where context_length() came from: "option", "max_model_len", "meta.n_ctx", "props", "unknown".
  const std::string& context_length_source() const { return context_source_; }
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
  std::string context_source_ = "unknown";
  std::string kind_;
  std::uint64_t salt_ = 0;
  int reset_supported_ = -1;  ///< -1 unknown, 0 the server has no such route, 1 it has
  bool last_reset_ok_ = false;
  long long reset_calls_ = 0;
  long long reset_skipped_ = 0;
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
