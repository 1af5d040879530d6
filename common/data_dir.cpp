#include "common/data_dir.hpp"

#include <cstdlib>

#include "common/build_paths.hpp"

namespace atlas {

std::filesystem::path data_dir_in_order(const std::string& flag, const char* env, const std::filesystem::path& checkout) {
  if (!flag.empty()) return flag;
  if (env != nullptr && *env != '\0') return env;
  // Tested as returned: lexically, "checkout/.." is the checkout's parent as its path reads, not
  // the parent of a symlinked checkout's target (which the file system's ".." would give).
  const auto beside = (checkout / ".." / "shared" / "data").lexically_normal();
  if (std::error_code ec; std::filesystem::is_directory(beside, ec)) return beside;
  return "data";
}

std::filesystem::path resolve_data_dir(const std::string& flag) {
  return data_dir_in_order(flag, std::getenv("ATLAS_DATA_DIR"), build_source_dir());
}

}  // namespace atlas
