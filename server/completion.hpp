#pragma once
// One completion request from parsed body to response, independent of HTTP: prepare() checks
// the model name, renders the chat template, tokenizes and checks the context (ApiError 400);
// run() decodes (the caller holds the decode-queue turn) and emits OpenAI chunk objects as
// tokens arrive (streaming) or returns the whole response object.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/chat_template.hpp"
#include "server/generator.hpp"
#include "server/openai_request.hpp"

namespace atlas::server {

struct PreparedRequest {
  CompletionRequest req;
  std::vector<int> prompt_ids;
  int max_new_tokens = 0;
  bool parse_tools = false;       ///< chat with tools offered: tool calls are read back
  std::string id;                 ///< "cmpl-N" / "chatcmpl-N"
  std::int64_t created = 0;       ///< unix seconds
};

class CompletionRunner {
 public:
  /// `chat_template` renders chat requests; `served_name` is the only accepted model name.
  CompletionRunner(Generator& gen, chat::ChatTemplate chat_template, std::string served_name);

  /// Throws ApiError (400) for an unknown model, a template error, an out-of-vocabulary token
  /// id, or a prompt (+ max_tokens) longer than the context. A text prompt is refused on its
  /// bytes before tokenising when it cannot fit.
  PreparedRequest prepare(CompletionRequest req);

  /// Decodes. With req.stream, `emit` receives each chunk object (role chunk, content/tool-call
  /// deltas, the finish chunk, then a usage chunk when include_usage) and returns false when
  /// the client is gone (decoding then stops; the cached prefix stays usable). Returns the full
  /// response object (non-streaming), or the usage object (streaming). Throws ApiError (500)
  /// for an engine failure. `client_gone`, when given, is asked every few milliseconds while
  /// decoding (streaming or not); true stops decoding as a failed emit does (run() then returns
  /// an empty object): a client that left must not keep the decode slot busy for up to
  /// max_tokens, and a stream whose text is held back (stop strings, tool calls) emits nothing
  /// that could fail.
  nlohmann::json run(const PreparedRequest& p, const std::function<bool(const nlohmann::json&)>& emit,
                     const std::function<bool()>& client_gone = {});

  /// Renders the chat prompt for `messages`/`tools` (exposed for tests).
  std::string render_chat(const CompletionRequest& req) const;
  const std::string& served_name() const { return served_name_; }
  Generator& generator() { return gen_; }

 private:
  /// The prompt's ids; ApiError 400 (`context_length_exceeded`, `param`) when its bytes show
  /// it cannot fit, before any tokenising, or once the tokenizer has counted more ids than fit.
  std::vector<int> encode_prompt(const std::string& text, const char* param) const;

  Generator& gen_;
  chat::ChatTemplate template_;
  std::string served_name_;
  std::size_t max_token_bytes_;  // the tokenizer's longest token, in bytes
  std::atomic<std::uint64_t> counter_{0};
};

/// Text before the first occurrence of any stop string, and whether one occurred.
/// `hold` returns how many trailing bytes of `text` could still begin a stop string.
struct StopScan {
  std::size_t cut = 0;     ///< bytes of text that are safe to emit
  bool stopped = false;    ///< a stop string begins at `cut`
};
StopScan scan_stop_strings(std::string_view text, const std::vector<std::string>& stops);

}  // namespace atlas::server
