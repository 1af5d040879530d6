#pragma once
// Turning a model's output into BFCL's decoded form: a list of `{function_name: {param: value}}`
// (spec §2.2-2.5). Three input formats:
//  - python: the prompt-mode text "[func(param=value), ...]" (MU:469-480, MU:248-370);
//  - json:   the format-sensitivity JSON return format (MU:300-304, JP:5-21);
//  - fc:     native function calling, a JSON array of {name: "<arguments JSON text>"}
//            (openai_completion.py:52-59).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "suites/bfcl/py_eval.hpp"
#include "suites/bfcl/py_value.hpp"

namespace atlas::suites::bfcl {

enum class OutputFormat { python, json, fc };
const char* to_string(OutputFormat f);
/// "python" | "json" | "fc"; nullopt otherwise.
std::optional<OutputFormat> parse_output_format(std::string_view s);

/// One call after the format gate: the single key (normally a str) and its argument dict
/// (keys are str, or None for a `**mapping` argument).
struct DecodedCall {
  PyValue name;
  PyDict args;
};

/// Prompt-mode decoding (spec §2.2). Returns the decoded list; throws PyDecodeError (for
/// PySyntaxError too) where BFCL's decoder raises.
PyValue decode_python(std::string_view text);
/// JSON return format (spec §2.4). A JSON syntax error gives an empty list, as upstream.
PyValue decode_json_format(std::string_view text);
/// Native function calling (spec §2.3). `result` is what the handler stored: a list of
/// {name: "<arguments JSON>"}, or the text the model answered instead (a string).
PyValue decode_fc(const nlohmann::ordered_json& result);

/// The format gate (spec §2.5, U:570-589): a list whose elements are dicts with exactly one key
/// whose value is a dict. nullopt when the gate fails.
std::optional<std::vector<DecodedCall>> as_calls(const PyValue& decoded);

/// BFCL's is_empty_output (spec §6): [] or [{}].
bool is_empty_output(const PyValue& decoded);

}  // namespace atlas::suites::bfcl
