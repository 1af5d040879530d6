#pragma once
// What a suite drives: the in-process engine (EngineTarget, suites/engine_target.hpp) or any
// OpenAI-compatible server over HTTP (EndpointTarget, suites/endpoint/). Suites measure through
// this interface only, so their records are comparable across transports.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/sampler.hpp"
#include "engine/tokenizer/tokenizer.hpp"

namespace atlas::suites {

struct TargetRequest {
  /// Prompt as token ids (BOS included when the model uses one). In-process targets use these
  /// directly; endpoint targets send `messages` when set (chat), else these ids, else `prompt_text`.
  std::vector<int> prompt_ids;
  std::string prompt_text;
  nlohmann::json messages = nullptr;  ///< chat messages (endpoint chat mode)
  nlohmann::json tools = nullptr;     ///< OpenAI tool schemas (native function calling)
  int max_new_tokens = 16;
  engine::SamplingParams sampling;
  bool ignore_eos = false;            ///< decode exactly max_new_tokens (timing runs)
  bool reuse_prefix = true;           ///< keep/reuse the session's KV cache prefix
  /// Ask an endpoint for the generated token ids (vLLM/atlas-serve `return_token_ids`, llama.cpp
  /// `logprobs`), so a follow-up prompt can extend the output exactly (agentic suite).
  bool return_token_ids = false;
  /// A cold request (suites/cold_request.hpp, agentic turn 1, load requests): an endpoint whose
  /// server can skip its prefix cache for one request does so (llama.cpp `cache_prompt: false`),
  /// so the prompt needs no salt. Other targets ignore it.
  bool cold = false;
  /// >= 0: ask for each generated token's log-probability and this many alternatives (0..20):
  /// completions `logprobs: N`, chat `logprobs: true, top_logprobs: N` (OpenAI, vLLM, atlas-serve,
  /// llama.cpp). -1: none.
  int top_logprobs = -1;
};

/// A token's log-probability as a server reported it (OpenAI `logprobs`).
struct ReportedLogprob {
  std::string token;       ///< the server's token string ("token_id:N" with vLLM's return_tokens_as_token_ids)
  double logprob = 0;      ///< natural log (OpenAI's -9999 stands for -inf)
  int id = -1;             ///< the token id where the server gives one (chat `id`: atlas-serve, llama.cpp; "token_id:N"), else -1
};

/// One generated token's log-probabilities. `top`: the alternatives, most likely first; on
/// completions the server's dict, which holds the chosen token too (OpenAI: up to N + 1).
struct ReportedTokenLogprobs {
  ReportedLogprob chosen;
  std::vector<ReportedLogprob> top;
};

struct TargetResponse {
  bool ok = true;
  std::string error;                      ///< why it failed, when !ok
  /// The HTTP status of the server's answer (endpoint targets; the last attempt's when retried);
  /// 0 in process or when no status line arrived. 429 is a server refusing for load.
  int http_status = 0;
  /// Generated ids: in-process always; over HTTP only when the server listed all of them
  /// (TargetRequest.return_token_ids on a server that can), else empty.
  std::vector<int> output_ids;
  std::string text;                       ///< generated text
  nlohmann::json tool_calls = nullptr;    ///< parsed tool calls (endpoint native FC)
  std::string finish_reason;              ///< "stop" | "length" | "tool_calls" | "" (unknown)
  /// The server's own account of the request where it gives one (llama.cpp `timings`:
  /// prompt_n, prompt_ms, predicted_n, predicted_ms, cache_n), else null.
  nlohmann::json server_timings = nullptr;
  /// Where token counts came from: "engine", "server usage", "local tokenizer".
  std::string token_count_source;
  int prompt_tokens = 0;
  int completion_tokens = 0;
  int cached_tokens = 0;                  ///< prefix tokens reused from the KV cache
  int prefilled_tokens = 0;               ///< prompt tokens actually prefilled
  std::int64_t t_request_ns = 0;          ///< request sent / generate() called (atlas::now_ns)
  std::int64_t t_first_byte_ns = 0;       ///< first response byte (endpoint); = first token in-process
  std::vector<std::int64_t> token_t_ns;   ///< arrival time of each generated token
  std::int64_t t_end_ns = 0;
  /// In process: the run-queue wait of the thread that ran the request (suites/run_queue_wait.hpp) from
  /// t_request_ns to the first token and to the last, ns; nothing over HTTP or without schedstat.
  std::optional<std::int64_t> run_queue_wait_first_ns, run_queue_wait_ns;
  /// One per generated token the server listed, when TargetRequest::top_logprobs >= 0 (in
  /// process: the engine's, ids and the tokenizer's piece text).
  std::vector<ReportedTokenLogprobs> logprobs;
};

class Target {
 public:
  virtual ~Target() = default;
  virtual std::string name() const = 0;               ///< "engine:cpu", "endpoint:http://..."
  virtual TargetResponse generate(const TargetRequest& req) = 0;
  /// Drops the session's cached prefix (cold runs).
  virtual void reset_session() = 0;
  /// The tokenizer used to build prompts and count tokens (the engine's, or a local copy).
  virtual const engine::Tokenizer& tokenizer() const = 0;
  virtual int context_length() const = 0;
  /// Provenance for the record: backend and options, or endpoint URL and /v1/models answer.
  virtual nlohmann::json provenance() const = 0;
  /// Asked right after reset_session(): a value unique to this target instance that cold
  /// requests mix into their prompts, so a server's prefix cache cannot hold them from an
  /// earlier run or request (vLLM's and AIPerf's benchmarks use a random prefix the same way).
  /// 0 when the reset is known to have emptied the cache (in process; a server that accepted
  /// the reset) or when the target makes each TargetRequest::cold request cold by itself,
  /// keeping prompts and outputs reproducible and reuse figures comparable.
  virtual std::uint64_t cold_salt() const { return 0; }
  /// engine::Backend::routing_fingerprint of an in-process engine; nothing for other targets.
  virtual std::optional<std::uint64_t> routing_fingerprint() { return std::nullopt; }
  virtual void reset_routing_fingerprint() {}
};

}  // namespace atlas::suites
