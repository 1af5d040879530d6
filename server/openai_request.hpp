#pragma once
// Parsing and validating the body of POST /v1/completions and /v1/chat/completions. Every
// violation throws ApiError 400 naming the field (`param`) and the bad value. Known parameters
// the server does not implement (echo, best_of, penalties, response_format, ...) are
// 400 `unsupported_value` unless they hold their "off" value; other unknown fields are ignored
// (as vLLM does), so clients that send extra options still work.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/sampler.hpp"
#include "server/api_error.hpp"

namespace atlas::server {

struct CompletionRequest {
  bool chat = false;
  std::string model;
  std::string prompt_text;                  ///< completions: text prompt (when prompt_ids is empty)
  std::vector<int> prompt_ids;              ///< completions: prompt given as token ids
  bool prompt_is_ids = false;
  nlohmann::ordered_json messages;          ///< chat: normalised (content is a string or null)
  nlohmann::ordered_json tools;             ///< chat: tool schemas, or null
  bool tool_choice_none = false;            ///< tool_choice: "none" -> tools not offered
  std::optional<int> max_tokens;            ///< max_tokens / max_completion_tokens
  engine::SamplingParams sampling;
  bool seed_given = false;
  bool stream = false;
  bool include_usage = false;               ///< stream_options.include_usage
  std::vector<std::string> stop;            ///< stop strings (not returned)
  bool ignore_eos = false;                  ///< vLLM extension: decode exactly max_tokens
  /// vLLM extension: EOS and stop strings are not honoured before this many tokens
  /// (0..max_tokens; engine::GenerateRequest::min_new_tokens).
  int min_tokens = 0;
  /// Log-probabilities of each generated token (raw distribution, engine/logprobs.hpp):
  /// completions `logprobs: N` (N alternatives), chat `logprobs: true` + `top_logprobs: N`.
  bool logprobs = false;
  int top_logprobs = 0;                     ///< 0..engine::kMaxTopLogprobs alternatives per token
  /// vLLM extension: logprobs name tokens "token_id:N" instead of their text.
  bool return_tokens_as_token_ids = false;
  /// vLLM extension: each choice carries `token_ids`, the ids generated since the previous
  /// chunk (streaming) or all of them; clients extend a prompt with them exactly.
  bool return_token_ids = false;
  bool add_generation_prompt = true;        ///< chat: vLLM extension
};

/// Throws ApiError (400) for malformed JSON, JSON nested deeper than kMaxJsonNesting
/// (common/json_depth.hpp), or any field of the wrong type or range.
CompletionRequest parse_completion_request(std::string_view body, bool chat);

}  // namespace atlas::server
