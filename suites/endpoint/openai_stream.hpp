#pragma once
// Reads the events of an OpenAI streaming response (/v1/completions or /v1/chat/completions,
// stream: true) into generated text, tool calls, usage and the arrival time of every
// token-bearing chunk. Token-bearing means: completion `text`, chat `delta.content` or
// `delta.reasoning_content` non-empty, a `delta.tool_calls` entry, token ids listed for it, or
// a server count of generated tokens that grew with it. A role-only or empty first chunk is
// therefore not a token (vLLM #3768), and a trailing usage-only chunk (`choices: []`) does not
// move the last-token time (vLLM #55508); but a chunk with empty text whose server says it
// carried a token is one: llama.cpp streams `"text": ""` for a token that may start a stop
// string (its text is held back until the match fails or completes), and TTFT must be stamped
// at the first token, not at the first visible character. A token that completes no UTF-8
// character llama.cpp does not stream at all: its count arrives with the next chunk.
//
// Servers put token ids and counts in different places; the reader takes each where it is:
//   token ids   choices[0].token_ids (vLLM and atlas-serve with `return_token_ids`),
//               choices[0].logprobs.content[].id (llama.cpp with `logprobs`), a top-level
//               `tokens` array (llama.cpp's own /completion with `return_tokens`)
//   count so far  a chunk's `usage.completion_tokens` when usage is streamed per chunk (vLLM
//               continuous_usage_stats), llama.cpp's `timings.predicted_n` (`timings_per_token`):
//               cumulative; counted only on chunks before the finish chunk, or on the finish
//               chunk of a stream that sent counts before it (a count on the finish chunk alone
//               is the final usage, not a token), except when no token-bearing chunk came
//               before it: then the counted tokens arrived with it (llama.cpp holds back a
//               token that completes no UTF-8 character, so a reply of only such tokens is
//               one finish chunk with "text": "" and predicted_n N), and the first token's
//               time is that chunk's; the same for a usage-only chunk with nothing before it
//   usage       a top-level `usage` object on any chunk (OpenAI/vLLM/SGLang/TRT-LLM: a final
//               usage chunk; llama.cpp: on the finish chunk; vLLM continuous_usage_stats: on
//               every chunk, completion_tokens cumulative)
//   cached      usage.prompt_tokens_details.cached_tokens
//   timings     llama.cpp's top-level `timings` (prompt_n, prompt_ms, predicted_n, predicted_ms,
//               cache_n), kept as the server's own account of the request
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suites/endpoint/sse_parser.hpp"
#include "suites/target.hpp"

namespace atlas::suites::endpoint {

struct ContentChunk {
  std::int64_t t_ns = 0;
  std::uint64_t wake = 0;  ///< the client's wake-up that read it (HttpClient OnBody), 0 unknown
  std::string text;  ///< the text (or tool name + argument text) it carried
  int ids = 0;       ///< token ids the server listed for this chunk (0: none listed)
  /// The server's count of tokens generated up to and including this chunk (cumulative:
  /// usage.completion_tokens streamed per chunk, or llama.cpp's timings.predicted_n), or -1.
  int cumulative_tokens = -1;
};

struct StreamUsage {
  int prompt_tokens = 0;
  int completion_tokens = 0;
  int cached_tokens = 0;  ///< usage.prompt_tokens_details.cached_tokens (0 when absent)
};

/// The most tool calls one streamed response may carry (`delta.tool_calls[].index` below this):
/// calls are merged into a list up to their index, so the index is bounded before it allocates.
inline constexpr std::size_t kMaxStreamToolCalls = 1024;

class OpenAiStreamReader {
 public:
  /// Consumes one event received at `t_ns` in the client's wake-up `wake` (0: unknown). After
  /// an error, later events are ignored.
  void on_event(const SseEvent& ev, std::int64_t t_ns, std::uint64_t wake = 0);

  bool done() const { return done_; }                  ///< `data: [DONE]` seen
  const std::string& error() const { return error_; }  ///< empty while the stream is well-formed
  const std::string& text() const { return text_; }
  /// Tool calls merged from their deltas: [{id, type, function: {name, arguments}}], or null.
  nlohmann::json tool_calls() const;
  const std::vector<ContentChunk>& chunks() const { return chunks_; }
  const std::optional<StreamUsage>& usage() const { return usage_; }
  const std::string& finish_reason() const { return finish_reason_; }
  int events() const { return events_; }
  /// Output token ids as the server listed them, in order; empty when it listed none.
  const std::vector<int>& token_ids() const { return token_ids_; }
  /// True when token_ids() is the whole output: the server listed ids, and as many as its usage
  /// says it generated (or, without usage, every token-bearing chunk listed some).
  bool ids_complete() const {
    if (!ids_seen_) return false;
    if (usage_) return static_cast<int>(token_ids_.size()) == usage_->completion_tokens;
    return ids_missing_ == 0;
  }
  /// Each token's log-probabilities from the chunks' `choices[0].logprobs`
  /// (openai_logprobs.hpp), in order; empty when the server sent none.
  const std::vector<ReportedTokenLogprobs>& logprobs() const { return logprobs_; }
  /// llama.cpp's `timings` object of the last chunk that had one, or null.
  const nlohmann::json& server_timings() const { return timings_; }
  /// Where ContentChunk::cumulative_tokens came from: "server usage per chunk", "server timings
  /// per chunk" (llama.cpp predicted_n), "server count on the finish chunk, no token streamed
  /// before it", or "" when the server sent no counts per chunk.
  const std::string& cumulative_source() const { return cumulative_source_; }

 private:
  void fail(std::string why);
  /// Records a chunk of `count` tokens at `t_ns` for a stream whose finish or usage chunk is
  /// the first to say tokens were generated (nothing token-bearing came before it).
  void stamp_unstreamed_tokens(std::int64_t t_ns, std::uint64_t wake, int count);

  bool done_ = false;
  std::string error_;
  std::string text_;
  nlohmann::json tool_calls_ = nlohmann::json::array();
  std::vector<ContentChunk> chunks_;
  std::optional<StreamUsage> usage_;
  std::string finish_reason_;
  int events_ = 0;
  std::vector<int> token_ids_;
  std::vector<ReportedTokenLogprobs> logprobs_;
  bool ids_seen_ = false;
  int ids_missing_ = 0;  ///< token-bearing chunks that listed no ids
  nlohmann::json timings_ = nullptr;
  int cumulative_ = 0;       ///< the server's count of generated tokens so far (per-chunk counts)
  bool counts_streamed_ = false;  ///< a chunk before the finish chunk carried a count
  std::string cumulative_source_;
};

}  // namespace atlas::suites::endpoint
