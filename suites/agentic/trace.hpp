#pragma once
// Agentic session traces (format: docs/agentic-traces.md). A trace is a system prompt, tool
// schemas, and an ordered list of messages; each "assistant" entry is one generation request
// over everything before it.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace atlas::suites {

enum class TraceRole { user, tool, assistant };
const char* to_string(TraceRole r);

struct TraceMessage {
  TraceRole role = TraceRole::user;
  std::string name;                 ///< tool name (role tool)
  std::optional<std::string> text;  ///< content as text (user/tool) ...
  std::optional<int> tokens;        ///< ... or as this many synthetic filler tokens
  int max_tokens = 0;               ///< assistant: tokens to generate (exactly; ignore_eos)
  double think_ms = 0;              ///< wait before this message (user think / tool latency)
};

struct AgenticTrace {
  std::string name;
  std::string description;
  std::string system;
  nlohmann::json tools = nlohmann::json::array();  ///< OpenAI tool schemas
  std::vector<TraceMessage> messages;
  std::string source;  ///< file it was read from ("<memory>" when parsed from a string)

  int assistant_turns() const;
};

/// Parses and validates a trace. Throws SuiteError "<source>: <field path> <problem>, got <value>"
/// e.g. "traces/x.json: turns[3].max_tokens must be an integer >= 1, got \"many\"".
AgenticTrace parse_trace(const nlohmann::json& j, const std::string& source);
/// Reads and parses a trace file (malformed JSON is reported with the byte position).
AgenticTrace load_trace(const std::filesystem::path& path);

}  // namespace atlas::suites
