#pragma once
// Reads the `logprobs` object of an OpenAI choice (a response's or a streamed chunk's) into
// ReportedTokenLogprobs, one per token, in either shape:
//   chat         {"content": [{"token", "logprob", "top_logprobs": [{"token", "logprob"}], "id"?}]}
//                (OpenAI, vLLM, atlas-serve; llama.cpp for both routes, adding "id")
//   completions  {"tokens": [str], "token_logprobs": [num], "top_logprobs": [{str: num}]}
//                (OpenAI's legacy shape: vLLM, atlas-serve)
// A token string "token_id:N" (vLLM's return_tokens_as_token_ids) gives the id N. Entries that
// are not of these types (a logprob that is not a number) are skipped, not guessed.
#include <vector>

#include <nlohmann/json.hpp>

#include "suites/target.hpp"

namespace atlas::suites::endpoint {

/// Appends the tokens of `logprobs` (null or an unknown shape: none) to `out`.
void append_openai_logprobs(const nlohmann::json& logprobs, std::vector<ReportedTokenLogprobs>& out);

}  // namespace atlas::suites::endpoint
