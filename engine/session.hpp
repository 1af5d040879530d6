#pragma once
// Generation: prefill then decode over a backend's KV cache, streaming each token with a
// monotonic timestamp, with prefix reuse across requests of one session.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend.hpp"
#include "engine/logprobs.hpp"
#include "engine/sampler.hpp"

namespace atlas::engine {

struct GenerateRequest {
  std::vector<int> prompt_ids;   ///< BOS included when the model uses one
  int max_new_tokens = 16;       ///< new tokens only
  SamplingParams sampling;
  std::vector<int> stop_ids;     ///< generation ends when one is produced (it is not returned)
  /// Stop ids are not honoured before this many tokens were produced (vLLM's min_tokens): one
  /// produced earlier is an ordinary output token. 0..max_new_tokens. vLLM masks the stop ids'
  /// logits instead; not honouring them needs no change to any backend's sampler, and the
  /// length asked is the length produced either way.
  int min_new_tokens = 0;
  bool reuse_prefix = true;      ///< reuse the session's cached KV for a common prefix
  /// Log-probabilities of each output token and of the `top_logprobs` most likely ones (0..
  /// kMaxTopLogprobs), from the raw distribution (engine/logprobs.hpp). Needs a backend that
  /// supports_logprobs(); otherwise generate() throws UnsupportedFeatureError before any work.
  bool logprobs = false;
  int top_logprobs = 0;
  /// Asked before the prefill, between its chunks (backends that report them: the CPU) and
  /// after it; true stops generate() with GenerationCancelled. Empty = never. Decoding is
  /// stopped by throwing from on_token instead.
  std::function<bool()> cancelled;
};

struct TokenEvent {
  int id = 0;
  int index = 0;           ///< 0 for the first generated token
  std::int64_t t_ns = 0;   ///< atlas::now_ns() when the token was known on the host
  std::optional<TokenLogprobs> logprobs;  ///< when GenerateRequest::logprobs
};

enum class StopReason { max_tokens, stop_token, context_full };
const char* to_string(StopReason r);

struct GenerateResult {
  std::vector<int> output_ids;
  std::vector<std::int64_t> token_t_ns;  ///< one per output id
  std::vector<TokenLogprobs> logprobs;   ///< one per output id when GenerateRequest::logprobs, else empty
  std::int64_t t_start_ns = 0;           ///< request start (before prefill)
  std::int64_t t_end_ns = 0;
  int prefix_reused = 0;                 ///< prompt tokens whose KV came from the cache
  int prefilled = 0;                     ///< prompt tokens run through prefill
  StopReason stop = StopReason::max_tokens;
};

class Session {
 public:
  explicit Session(Backend& backend) : backend_(&backend) {}
  /// Throws EngineError when the prompt does not fit the context or a field of `req` is out of
  /// range, UnsupportedFeatureError for logprobs on a backend without them, and
  /// GenerationCancelled when req.cancelled said so (the cache then holds no prefix).
  GenerateResult generate(const GenerateRequest& req,
                          const std::function<void(const TokenEvent&)>& on_token = {});
  /// Forgets the cached prefix.
  void reset() { cached_.clear(); }
  const std::vector<int>& cached_tokens() const { return cached_; }
  Backend& backend() { return *backend_; }

 private:
  Backend* backend_;
  std::vector<int> cached_;  ///< tokens whose K/V are in the backend's cache, in order
};

}  // namespace atlas::engine
