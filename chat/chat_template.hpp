#pragma once
// Chat templates: the Jinja2 subset used by the chat templates that ship with models (GGUF
// `tokenizer.chat_template`, Hugging Face tokenizer_config.json `chat_template`), rendered the
// way transformers' apply_chat_template does (jinja2 with trim_blocks and lstrip_blocks).
//
// Supported: text, {{ expr }}, {% if/elif/else/endif %}, {% for x in xs [if cond] %} with
// {% else %} and `loop` (index, index0, revindex, revindex0, first, last, length, previtem,
// nextitem), {% for k, v in d.items() %}, {% set x = expr %}, {% set ns.attr = expr %},
// namespace(...), comments, whitespace control ({%- -%} {{- -}}). Expressions: literals
// (strings, numbers, true/false/none in either case, lists, dicts), variables, a.b, a['b'],
// a[i], slices a[i:j], ~ + - * / // %, comparisons, in / not in, and/or/not, `x if c else y`,
// tests (is [not] defined/undefined/none/string/number/mapping/sequence/iterable/true/false),
// filters (trim, tojson[(indent=N)], length/count, string, lower, upper, title, capitalize,
// first, last, join, default/d, items, list, safe, int, float, replace, reverse), string methods
// (strip, lstrip, rstrip, startswith, endswith, split, upper, lower, replace, title), dict
// methods (items, keys, values, get), raise_exception(msg), range(n).
// Not supported (a template using them fails to parse, naming the construct): macros, call
// blocks, filter blocks, includes/extends, block set.
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "chat/error.hpp"

namespace atlas::chat {

/// Template values: insertion-ordered JSON, so tojson prints keys in the order the client sent
/// them (as Python's json.dumps does for the dicts transformers renders).
using TemplateValue = nlohmann::ordered_json;

class ChatTemplate {
 public:
  /// Parses `source`. Throws TemplateError "chat template line L: <what> (<excerpt>)".
  explicit ChatTemplate(std::string source);
  ~ChatTemplate();
  ChatTemplate(ChatTemplate&&) noexcept;
  ChatTemplate& operator=(ChatTemplate&&) noexcept;

  /// Renders with `context` (an object: messages, tools, add_generation_prompt, bos_token, ...).
  /// Throws TemplateError for a raise_exception() call or a type error, naming the line; the
  /// server answers those with 400.
  std::string render(const TemplateValue& context) const;
  const std::string& source() const { return source_; }

 private:
  struct Impl;
  std::string source_;
  std::unique_ptr<Impl> impl_;
};

/// The template used when a model ships none (stories260K, llama2.c checkpoints): plain
/// "System:/User:/Assistant:/Tool:" turns; tools are listed in a system turn as JSON with an
/// instruction to answer with <tool_call>{"name": ..., "arguments": ...}</tool_call> (Hermes
/// style, so the server's parser reads the calls back). Documented in docs/serving.md.
const std::string& fallback_chat_template();

/// Python's json.dumps(v, ensure_ascii=False[, indent=N]) text: ", " and ": " separators without
/// indent, insertion order of keys. indent < 0 means none.
std::string python_json_dumps(const TemplateValue& v, int indent = -1);

}  // namespace atlas::chat
