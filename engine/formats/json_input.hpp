#pragma once
// JSON read from model files (safetensors headers, config.json, model.safetensors.index.json,
// tokenizer.json, tokenizer_config.json): parsed only after the nesting depth is checked.
// nlohmann::json parses iteratively, but dump() (every error message that quotes a value) and
// comparisons recurse once per level: a 100,000-deep `[[[...` as a safetensors dtype or a
// tokenizer.json normalizer overflowed the stack (fuzz/replay_reports.py, cases st-deep-json and
// dir-tok-deep, replaying another loader's public report).
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace atlas::engine {

/// Parses `text`, the JSON of `file` (`what` names the part, e.g. "safetensors header"; empty for
/// a whole file). Throws EngineError naming the file when the text nests deeper than
/// atlas::kMaxJsonNesting (256) levels, is not valid JSON, or (reject_duplicate_keys) an object
/// repeats a key (the message names the key).
nlohmann::json parse_json_input(std::string_view text, const std::filesystem::path& file, const std::string& what = "",
                                bool reject_duplicate_keys = false);

/// The file's JSON (read whole): parse_json_input of its bytes.
nlohmann::json read_json_input(const std::filesystem::path& file);

/// At most 80 characters of `j` as JSON (for error messages; `j` was depth-checked).
std::string json_brief(const nlohmann::json& j);

}  // namespace atlas::engine
