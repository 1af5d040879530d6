#pragma once
// The `logprobs` object of an OpenAI choice, built token by token from the engine's
// log-probabilities (engine/logprobs.hpp: raw distribution). Two shapes:
//   /v1/completions       {"tokens": [str], "token_logprobs": [float], "top_logprobs": [{str: float}],
//                          "text_offset": [int]}: each top_logprobs dict holds the N most likely
//                          tokens and the chosen one (up to N + 1 entries, OpenAI's rule; vLLM's
//                          too); text_offset counts the characters (UTF-8 code points, a code
//                          point counted at its first byte) of the completion before the token
//   /v1/chat/completions  {"content": [{"token", "logprob", "bytes", "id", "top_logprobs":
//                          [{"token", "logprob", "bytes", "id"}]}], "refusal": null}: top_logprobs
//                          holds exactly the N most likely; "id" (the token id) as llama.cpp adds
// A token's string is its text when its bytes are valid UTF-8, else "bytes:\xNN..." (OpenAI's
// form for a partial character); "token_id:N" with return_tokens_as_token_ids (vLLM). A
// log-probability of -inf is -9999.0 (JSON has no infinity; OpenAI's and vLLM's value).
#include <string>

#include <nlohmann/json.hpp>

#include "engine/logprobs.hpp"
#include "engine/tokenizer/tokenizer.hpp"

namespace atlas::server {

class LogprobsJson {
 public:
  LogprobsJson(const engine::Tokenizer& tok, bool chat, bool tokens_as_ids) : tok_(tok), chat_(chat), as_ids_(tokens_as_ids) {}

  /// Appends one generated token; `prev` is the id before it (the prompt's last for the first),
  /// for the tokenizer's piece rules (tokenizer.hpp token_bytes).
  void add(int prev, const engine::TokenLogprobs& lp);
  /// The tokens added since the last take() as a `logprobs` object, or null when there are none
  /// (a streamed chunk that carries no token). Completions' text_offset continues across takes.
  nlohmann::json take();

  /// A token's string in the logprobs (see the header comment).
  std::string token_string(int id, const std::string& bytes) const;

 private:
  const engine::Tokenizer& tok_;
  bool chat_;
  bool as_ids_;
  nlohmann::json pending_ = nlohmann::json::array();  // per token: chat entry, or [token, logprob, top dict, offset]
  std::size_t chars_ = 0;  // code points of the completion so far
};

/// -inf as -9999.0, the rest as it is (JSON numbers).
double wire_logprob(float lp);

}  // namespace atlas::server
