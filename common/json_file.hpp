#pragma once
// JSON files with errors that name the file and the position of a parse failure.
#include <filesystem>

#include <nlohmann/json.hpp>

namespace atlas {
/// Parses a JSON file; throws atlas::InputError "<path>: malformed JSON at byte N: ..." or
/// "<path>: cannot open for reading".
nlohmann::json read_json_file(const std::filesystem::path& path);
/// Writes `j` (2-space indent, trailing newline) atomically.
void write_json_file_atomic(const std::filesystem::path& path, const nlohmann::json& j);
}  // namespace atlas
