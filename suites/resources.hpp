#pragma once
// Where the checked-in suite inputs live: suites/config/*.json and suites/traces/*.json.
#include <filesystem>
#include <string_view>

namespace atlas::suites {

/// $ATLAS_SUITES_DIR when set, else the source tree's suites/ folder (common/build_paths.hpp).
std::filesystem::path suites_resource_dir();

/// `name` itself when it names an existing file (absolute or relative to the working
/// directory), else suites_resource_dir()/subdir/name (with ".json" appended when missing).
/// Throws SuiteError naming both places when neither exists.
std::filesystem::path resolve_resource(std::string_view name, std::string_view subdir);

}  // namespace atlas::suites
