#include "common/data_dir.hpp"

#include <cstdlib>

#include "common/build_paths.hpp"

namespace atlas {

std::filesystem::path resolve_data_dir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("ATLAS_DATA_DIR"); env && *env) return env;
  const auto beside = std::filesystem::path(build_source_dir()) / ".." / "shared" / "data";
  if (std::error_code ec; std::filesystem::is_directory(beside, ec)) return beside.lexically_normal();
  return "data";
}

}  // namespace atlas
