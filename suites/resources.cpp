#include "suites/resources.hpp"

#include <cstdlib>
#include <string>

#include "common/build_paths.hpp"
#include "suites/error.hpp"

namespace atlas::suites {

std::filesystem::path suites_resource_dir() {
  if (const char* e = std::getenv("ATLAS_SUITES_DIR"); e && *e) return e;
  return std::filesystem::path(::atlas::build_source_dir()) / "suites";
}

std::filesystem::path resolve_resource(std::string_view name, std::string_view subdir) {
  const std::filesystem::path direct(name);
  std::filesystem::path in_dir = suites_resource_dir() / subdir / direct;
  if (in_dir.extension() != ".json") in_dir += ".json";
  // A bare name ("coding-agent", "bfcl-pr") is the bundled resource when there is one: a file of
  // that name in the working directory (a pull request can add one at the checkout's root)
  // must not stand in for the copy the gate judges with.
  const bool bare = !direct.has_parent_path() && direct.extension() != ".json";
  if (bare && std::filesystem::is_regular_file(in_dir)) return in_dir;
  if (std::filesystem::is_regular_file(direct)) return direct;
  if (std::filesystem::is_regular_file(in_dir)) return in_dir;
  throw SuiteError("cannot find '" + std::string(name) + "': no such file" +
                   (direct.has_parent_path() || direct.extension() == ".json"
                        ? std::string()
                        : ", and no bundled config " + in_dir.string()));
}

}  // namespace atlas::suites
