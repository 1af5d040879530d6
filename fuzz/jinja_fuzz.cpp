// Chat templates (GGUF tokenizer.chat_template, tokenizer_config.json chat_template): the Jinja
// lexer, parser and evaluator, rendered with a context shaped like the server's (messages with
// tool calls, tools, add_generation_prompt).
#include "chat/chat_template.hpp"
#include "common/error.hpp"
#include "fuzz/fuzz_target.hpp"

ATLAS_FUZZ_TARGET(jinja) {
  using namespace atlas;
  static const chat::TemplateValue ctx = chat::TemplateValue::parse(R"({
    "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>",
    "tools": [{"type": "function", "function": {"name": "add", "description": "a + b",
               "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}}],
    "messages": [
      {"role": "system", "content": "Be kind."},
      {"role": "user", "content": " 1+2? "},
      {"role": "assistant", "content": null, "reasoning_content": "think",
       "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "add", "arguments": {"a": 1, "b": 2}}}]},
      {"role": "tool", "content": "3", "tool_call_id": "c0"},
      {"role": "assistant", "content": "It is 3."}
    ]})");
  try {
    const chat::ChatTemplate t{std::string(fuzz::text(data, size))};
    (void)t.render(ctx);
  } catch (const InputError& e) {
    atlas::fuzz::rejected(e);
  }
  return 0;
}
