#include "common/json_file.hpp"

#include "common/atomic_file.hpp"
#include "common/error.hpp"

namespace atlas {

nlohmann::json read_json_file(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path.string() + ": malformed JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  }
}

void write_json_file_atomic(const std::filesystem::path& path, const nlohmann::json& j) {
  write_file_atomic(path, j.dump(2) + "\n");
}

}  // namespace atlas
