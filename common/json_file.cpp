#include "common/json_file.hpp"

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/json_depth.hpp"
#include "common/json_text.hpp"

namespace atlas {

nlohmann::json parse_json_text(std::string_view text, const std::string& source) {
  if (json_nesting_depth(text, kMaxJsonNesting) > kMaxJsonNesting)
    throw InputError(source + ": nested deeper than " + std::to_string(kMaxJsonNesting) + " levels (refused before parsing)");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(source + ": malformed JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {
    // A number out of range ("1e999") is out_of_range, not parse_error: it escaped as an
    // internal error and stopped `records list` for the whole store.
    throw InputError(source + ": malformed JSON: " + e.what());
  }
}

nlohmann::json read_json_file(const std::filesystem::path& path) { return parse_json_text(read_file(path), path.string()); }

void write_json_file_atomic(const std::filesystem::path& path, const nlohmann::json& j) {
  write_file_atomic(path, dump_pretty(j) + "\n");
}

}  // namespace atlas
