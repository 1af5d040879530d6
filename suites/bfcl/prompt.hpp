#pragma once
// What BFCL sends a model (spec §8): the prompt-mode system prompt with the function documents,
// the chat messages it goes into, a plain-text rendering for in-process models without a chat
// template, and the OpenAI tool schemas for native function calling.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suites/bfcl/dataset.hpp"

namespace atlas::suites::bfcl {

/// The entry's function documents with " Note that the provided function is in Python 3
/// syntax." appended to each description (U:621-641; generation side only).
nlohmann::ordered_json functions_for_generation(const BfclEntry& entry);

/// The default prompt-mode system prompt (constants/default_prompts.py, configuration
/// "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=classic"),
/// with `functions` serialised as json.dumps(indent=4) (MU:713-714).
std::string system_prompt(const nlohmann::ordered_json& functions);

/// The first turn's messages with the system prompt put in front of an existing system message
/// (joined by a blank line) or inserted as a new first message (MU:374-400).
nlohmann::ordered_json prompt_messages(const BfclEntry& entry);

/// A chat rendered as plain text for a model without a chat template:
/// "System: ...\n\nUser: ...\n\nAssistant:" (roles capitalised, blocks separated by a blank line).
std::string render_plain_text(const nlohmann::ordered_json& messages);

/// OpenAI-style tools for native function calling (MU:34-204 with GORILLA_TO_OPENAPI):
/// dict -> object, float -> number (+ format float and " This is a float type value."),
/// tuple -> array, any -> string; '.' in names -> '_' when `underscore_to_dot`.
nlohmann::ordered_json openai_tools(const BfclEntry& entry, bool underscore_to_dot);

/// Python's json.dumps(v, indent=4) (ensure_ascii, ", " / ": " separators with indent).
std::string python_json_dumps_indent4(const nlohmann::ordered_json& v);

}  // namespace atlas::suites::bfcl
