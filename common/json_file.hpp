#pragma once
// JSON files with errors that name the file and the position of a parse failure.
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace atlas {
/// Parses a JSON file; throws atlas::InputError "<path>: malformed JSON at byte N: ...",
/// "<path>: nested deeper than 256 levels" or "<path>: cannot open for reading".
nlohmann::json read_json_file(const std::filesystem::path& path);
/// The same for text read elsewhere (`git show`), `source` naming it in errors. The nesting is
/// checked before parsing (common/json_depth.hpp): records, baselines and configs reach
/// printers, diffs and comparisons that recurse once per level, and a file nested 10^6 deep
/// crashed `records list`, `diff`, `merge` and `ratchet` with a stack overflow.
nlohmann::json parse_json_text(std::string_view text, const std::string& source);
/// Writes `j` (2-space indent down to kPrettyJsonLevels levels, common/json_text.hpp; trailing
/// newline) atomically.
void write_json_file_atomic(const std::filesystem::path& path, const nlohmann::json& j);
}  // namespace atlas
