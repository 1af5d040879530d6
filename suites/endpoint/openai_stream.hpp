#pragma once
// Reads the events of an OpenAI streaming response (/v1/completions or /v1/chat/completions,
// stream: true) into generated text, tool calls, usage and the arrival time of every
// token-bearing chunk. Token-bearing means: completion `text`, chat `delta.content` or
// `delta.reasoning_content` non-empty, or a `delta.tool_calls` entry. A role-only or empty
// first chunk is therefore not a token (vLLM #3768), and a trailing usage-only chunk
// (`choices: []`) does not move the last-token time (vLLM #55508).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suites/endpoint/sse_parser.hpp"

namespace atlas::suites::endpoint {

struct ContentChunk {
  std::int64_t t_ns = 0;
  std::string text;  ///< the text (or tool name + argument text) it carried
};

struct StreamUsage {
  int prompt_tokens = 0;
  int completion_tokens = 0;
  int cached_tokens = 0;  ///< usage.prompt_tokens_details.cached_tokens (0 when absent)
};

class OpenAiStreamReader {
 public:
  /// Consumes one event received at `t_ns`. After an error, later events are ignored.
  void on_event(const SseEvent& ev, std::int64_t t_ns);

  bool done() const { return done_; }                  ///< `data: [DONE]` seen
  const std::string& error() const { return error_; }  ///< empty while the stream is well-formed
  const std::string& text() const { return text_; }
  /// Tool calls merged from their deltas: [{id, type, function: {name, arguments}}], or null.
  nlohmann::json tool_calls() const;
  const std::vector<ContentChunk>& chunks() const { return chunks_; }
  const std::optional<StreamUsage>& usage() const { return usage_; }
  const std::string& finish_reason() const { return finish_reason_; }
  int events() const { return events_; }

 private:
  void fail(std::string why);

  bool done_ = false;
  std::string error_;
  std::string text_;
  nlohmann::json tool_calls_ = nlohmann::json::array();
  std::vector<ContentChunk> chunks_;
  std::optional<StreamUsage> usage_;
  std::string finish_reason_;
  int events_ = 0;
};

}  // namespace atlas::suites::endpoint
