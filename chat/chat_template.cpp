// The public face of the chat-template renderer; the Jinja subset itself lives in jinja_*:
// segments (tags and whitespace control) -> lexer -> parser (AST) -> evaluator, with values and
// filters in their own files.
#include "chat/chat_template.hpp"

#include "chat/error.hpp"
#include "chat/jinja_evaluator.hpp"
#include "chat/jinja_parser.hpp"
#include "chat/jinja_value.hpp"

namespace atlas::chat {

struct ChatTemplate::Impl {
  std::vector<jinja::Node> nodes;
};

ChatTemplate::ChatTemplate(std::string source) : source_(std::move(source)), impl_(std::make_unique<Impl>()) {
  impl_->nodes = jinja::parse_template(source_);
}
ChatTemplate::~ChatTemplate() = default;
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;

std::string ChatTemplate::render(const TemplateValue& context) const {
  try {
    return jinja::render_nodes(impl_->nodes, context);
  } catch (const jinja::RaiseException& e) {
    throw TemplateError("chat template raised an exception: " + e.message);
  }
}

std::string python_json_dumps(const TemplateValue& v, int indent) {
  std::string out;
  jinja::dump_python_json(v, indent, 0, out);
  return out;
}

const std::string& fallback_chat_template() {
  // Turn separators are {{ '\n\n' }} expressions: a literal newline before a {%- tag would be
  // stripped by the whitespace control.
  static const std::string t =
      "{%- if tools %}"
      "System: You can call these tools. To call one, answer with "
      "<tool_call>{\"name\": <tool name>, \"arguments\": <arguments object>}</tool_call>."
      "{%- for tool in tools %}{{ '\\n' }}{{ tool | tojson }}{%- endfor %}{{ '\\n\\n' }}"
      "{%- endif %}"
      "{%- for message in messages %}"
      "{%- if message.role == 'system' %}System: {{ message.content | trim }}"
      "{%- elif message.role == 'user' %}User: {{ message.content | trim }}"
      "{%- elif message.role == 'assistant' %}Assistant:"
      "{%- if message.content %} {{ message.content | trim }}{% endif %}"
      "{%- if message.tool_calls %}{%- for call in message.tool_calls %}"
      " <tool_call>{\"name\": {{ call.function.name | tojson }}, \"arguments\": "
      "{%- if call.function.arguments is string %} {{ call.function.arguments }}"
      "{%- else %} {{ call.function.arguments | tojson }}{% endif %}}</tool_call>"
      "{%- endfor %}{%- endif %}"
      "{%- elif message.role == 'tool' %}Tool: {{ message.content | trim }}"
      "{%- else %}{{ raise_exception('unknown message role: ' ~ message.role) }}"
      "{%- endif %}{{ '\\n\\n' }}"
      "{%- endfor %}"
      "{%- if add_generation_prompt %}Assistant:{% endif %}";
  return t;
}

}  // namespace atlas::chat
