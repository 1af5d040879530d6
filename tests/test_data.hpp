#pragma once
// Where tests find the real inputs (../shared/data in CI) and the source tree. The data
// directory is required (README: make test needs it): require_data fails a test, never skips it.
#include "common/build_paths.hpp"
#include "common/data_dir.hpp"
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace atlas::test {
/// The data directory, in the order every binary uses (common/data_dir.hpp); ctest sets
/// ATLAS_DATA_DIR to the build's when it is unset (tests/CMakeLists.txt).
inline std::filesystem::path data_dir() { return resolve_data_dir(); }
inline std::filesystem::path source_dir() { return ATLAS_SOURCE_DIR; }
inline std::filesystem::path stories_bin() { return data_dir() / "models/stories260K/stories260K.bin"; }
inline std::filesystem::path stories_tok() { return data_dir() / "models/stories260K/tok512.bin"; }
inline std::filesystem::path stories_gguf() { return data_dir() / "models/stories260K-gguf/stories260K.gguf"; }
inline std::filesystem::path golden_jsonl() { return data_dir() / "models/stories260K/golden-public.jsonl"; }
/// REQUIREs that `p` (a file or folder of the data directory) exists.
inline void require_data(const std::filesystem::path& p) {
  REQUIRE_MESSAGE(std::filesystem::exists(p), p.string() << " not found: the tests need the data directory "
                                                            "(ATLAS_DATA_DIR, else ../shared/data beside the checkout; README)");
}
/// A fresh empty directory under the build tree for one test.
inline std::filesystem::path scratch_dir(const std::string& name) {
  auto p = std::filesystem::path(ATLAS_BINARY_DIR) / "test-scratch" / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}
}  // namespace atlas::test
