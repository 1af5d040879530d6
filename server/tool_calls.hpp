#pragma once
// Tool calls in generated text, read back into OpenAI `tool_calls`. Two output styles:
//  - Hermes (Qwen2.5/3, Hermes, the fallback template):
//      <tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>   (one block per call)
//  - Python-call style (Llama 3.2 / BFCL prompt mode): the whole answer is a list of calls
//      [f(a=1, b='x'), g()]   with keyword arguments that are Python literals.
// A block that does not parse stays in the content. Arguments are returned as a JSON string,
// as the OpenAI API does.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace atlas::server {

struct ToolCall {
  std::string name;
  std::string arguments;  ///< JSON text of the arguments object
};

struct ToolCallParse {
  std::string content;          ///< text outside the calls (trimmed when calls were found)
  std::vector<ToolCall> calls;
};

/// Parses a complete generation.
ToolCallParse parse_tool_calls(std::string_view text);

/// Parses `[f(a=1), g(b='x')]`; returns false (and leaves `out` unspecified) when `text` is not
/// exactly such a list (whitespace around it allowed).
bool parse_pythonic_calls(std::string_view text, std::vector<ToolCall>& out);

/// Incremental version for streaming: text goes in as it is generated, content comes out as
/// soon as it cannot be part of a call (a partial "<tool_call>" tag is held back), and each
/// Hermes call comes out when its closing tag arrives. An answer that starts with '[' is held
/// until finish() decides whether it is a Python-call list.
class ToolCallStream {
 public:
  struct Delta {
    std::string content;
    std::vector<ToolCall> calls;
  };
  Delta push(std::string_view text);
  Delta finish();
  int calls_emitted() const { return calls_emitted_; }

 private:
  enum class Mode { undecided, text, in_call, pythonic };
  Mode mode_ = Mode::undecided;
  std::string buf_;
  int calls_emitted_ = 0;
};

/// OpenAI tool_calls JSON for `calls`: [{id: "<id_prefix><n>", type: "function", function:
/// {name, arguments}}], n counting from `first_index`.
nlohmann::json tool_calls_json(const std::vector<ToolCall>& calls, const std::string& id_prefix, int first_index = 0);

}  // namespace atlas::server
