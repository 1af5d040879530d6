#pragma once
// Log-probabilities of generated tokens, as OpenAI's and vLLM's `logprobs` report them: the
// log-softmax of the raw logits (before temperature, top-k and top-p, vLLM's default
// "raw_logprobs"), for the token that was chosen and for the most likely tokens of the step.
#include <span>
#include <vector>

#include "engine/error.hpp"

namespace atlas::engine {

/// The most alternatives a request may ask per token (OpenAI's top_logprobs bound).
inline constexpr int kMaxTopLogprobs = 20;

struct TokenLogprob {
  int id = 0;
  float logprob = 0;  ///< natural log, <= 0; -inf for a token the logits make impossible
};

/// One generated token's log-probabilities.
struct TokenLogprobs {
  TokenLogprob chosen;
  /// The `top_n` most likely tokens of the step, most likely first (the lower id first on equal
  /// log-probability, as argmax); it may or may not include `chosen`.
  std::vector<TokenLogprob> top;
};

/// log_softmax(logits)[chosen] and the `top_n` largest entries of log_softmax(logits), summed in
/// double (max subtracted, then log of the sum of exponentials). Throws EngineError for empty
/// logits, `chosen` outside [0, logits.size()), or `top_n` outside [0, kMaxTopLogprobs]. A NaN
/// logit makes every log-probability NaN (the model produced garbage; no value is invented).
TokenLogprobs raw_logprobs(std::span<const float> logits, int chosen, int top_n);

/// A backend asked for something it does not compute (e.g. logprobs on a backend whose sampler
/// runs on the device without them); names the backend and the feature.
class UnsupportedFeatureError : public EngineError {
 public:
  UnsupportedFeatureError(std::string backend, std::string feature)
      : EngineError("the " + backend + " backend does not compute " + feature), backend_(std::move(backend)), feature_(std::move(feature)) {}
  const std::string& backend() const { return backend_; }
  const std::string& feature() const { return feature_; }

 private:
  std::string backend_;
  std::string feature_;
};

}  // namespace atlas::engine
