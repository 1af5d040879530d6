#pragma once
// Where the checked-in suite inputs live: suites/config/*.json and suites/traces/*.json.
#include <filesystem>
#include <string_view>

namespace atlas::suites {

/// $ATLAS_SUITES_DIR when set, else the source tree's suites/ folder (common/build_paths.hpp).
std::filesystem::path suites_resource_dir();

/// suites_resource_dir()/subdir/name (".json" appended when missing) for a bare name (no folder,
/// no ".json") that is bundled; else `name` itself when it names an existing file (absolute or
/// relative to the working directory); else the bundled path. Throws SuiteError naming both
/// places when neither exists.
std::filesystem::path resolve_resource(std::string_view name, std::string_view subdir);

}  // namespace atlas::suites
