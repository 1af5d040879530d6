// Where a suite input named by a bare name is read from (suites/resources.hpp).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/atomic_file.hpp"
#include "suites/resources.hpp"
#include "tests/test_data.hpp"

namespace fs = std::filesystem;

TEST_CASE("resolve_resource: a bare name is the bundled file, not a file of that name in the working directory") {
  // The gate points $ATLAS_SUITES_DIR at the merge-base's suites folder; a file named
  // "coding-agent" added at the checkout's root used to stand in for the bundled trace.
  const fs::path dir = atlas::test::scratch_dir("suites_resources");
  atlas::write_file_atomic(dir / "bundle" / "traces" / "t.json", "{\"bundled\": true}");
  atlas::write_file_atomic(dir / "t", "{\"planted\": true}");
  atlas::write_file_atomic(dir / "mine.json", "{}");
  const char* old = std::getenv("ATLAS_SUITES_DIR");
  const std::string saved = old ? old : "";
  ::setenv("ATLAS_SUITES_DIR", (dir / "bundle").c_str(), 1);
  const fs::path cwd = fs::current_path();
  fs::current_path(dir);
  const fs::path bare = atlas::suites::resolve_resource("t", "traces");
  const fs::path named = atlas::suites::resolve_resource("mine.json", "traces");  // a file named as a file
  fs::current_path(cwd);
  if (saved.empty()) {
    ::unsetenv("ATLAS_SUITES_DIR");
  } else {
    ::setenv("ATLAS_SUITES_DIR", saved.c_str(), 1);
  }
  CHECK(bare == dir / "bundle" / "traces" / "t.json");
  CHECK(named == fs::path("mine.json"));
}
