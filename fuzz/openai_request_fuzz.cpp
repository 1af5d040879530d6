// The body of POST /v1/chat/completions and /v1/completions (server/openai_request.hpp), and for
// a chat body that parses, the fallback chat template rendered over its messages and tools, as
// CompletionRunner::render_chat does.
#include "chat/chat_template.hpp"
#include "common/error.hpp"
#include "fuzz/fuzz_target.hpp"
#include "server/openai_request.hpp"

ATLAS_FUZZ_TARGET(openai_request) {
  using namespace atlas;
  static const chat::ChatTemplate fallback(chat::fallback_chat_template());
  const std::string_view body = fuzz::text(data, size);
  try {
    (void)server::parse_completion_request(body, false);
  } catch (const server::ApiError& e) {
    fuzz::check(e.status >= 400 && e.status < 500, "a bad body is a 4xx");
  }
  try {
    const server::CompletionRequest r = server::parse_completion_request(body, true);
    fuzz::check(r.chat && r.messages.is_array(), "a chat request has a messages array");
    if (r.max_tokens) fuzz::check(*r.max_tokens >= 0, "max_tokens is not negative");
    if (r.max_tokens) fuzz::check(r.min_tokens <= *r.max_tokens, "min_tokens does not exceed max_tokens");
    fuzz::check(r.min_tokens >= 0, "min_tokens is not negative");
    fuzz::check(r.top_logprobs >= 0 && r.top_logprobs <= 20, "top_logprobs is in [0, 20]");
    fuzz::check(r.logprobs || r.top_logprobs == 0, "alternatives only with logprobs");
    chat::TemplateValue ctx = chat::TemplateValue::object();
    ctx["messages"] = r.messages;
    if (!r.tools.is_null() && !r.tool_choice_none) ctx["tools"] = r.tools;
    ctx["add_generation_prompt"] = r.add_generation_prompt;
    try {
      (void)fallback.render(ctx);
    } catch (const InputError& e) {
      atlas::fuzz::rejected(e);
    }
  } catch (const server::ApiError& e) {
    fuzz::check(e.status >= 400 && e.status < 500, "a bad body is a 4xx");
  }
  return 0;
}
