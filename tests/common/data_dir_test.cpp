// The data directory's order has two implementations: atlas::resolve_data_dir (C++, every binary)
// and tools/lib/data_dir.sh (the scripts that run before a build: Makefile, CMake, .ci/run, the
// GPU and CI scripts). They must give the same answer in every case of the order.
#include "common/data_dir.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/build_paths.hpp"
#include "common/process.hpp"
#include "tests/test_data.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kScript = fs::path(atlas::build_source_dir()) / "tools" / "lib" / "data_dir.sh";

// What tools/lib/data_dir.sh's atlas_data_dir_for prints for CHECKOUT and FLAG, with
// ATLAS_DATA_DIR = env (nullopt: unset), run in `cwd`.
std::string shell_answer(const fs::path& checkout, const std::string& flag, const std::optional<std::string>& env,
                         const fs::path& cwd) {
  atlas::ProcessOptions o;
  o.cwd = cwd;
  o.env_overrides["ATLAS_DATA_DIR"] = env.value_or("");  // empty: unset
  const auto r = atlas::run_process_with(
      {"bash", "-c", "source \"$1\" && atlas_data_dir_for \"$2\" \"$3\"", "data_dir_test", kScript.string(),
       checkout.string(), flag},
      o);
  INFO(r.err);
  REQUIRE(r.exit_status == 0);
  REQUIRE(!r.out.empty());
  REQUIRE(r.out.back() == '\n');
  return r.out.substr(0, r.out.size() - 1);
}

}  // namespace

TEST_CASE("data directory order: tools/lib/data_dir.sh and resolve_data_dir agree") {
  const fs::path root = atlas::test::scratch_dir("data_dir_order");
  // A checkout with ../shared/data beside it, and one without.
  const fs::path with = root / "with" / "checkout", without = root / "without" / "checkout";
  fs::create_directories(with);
  fs::create_directories(root / "with" / "shared" / "data");
  fs::create_directories(without);
  // links/checkout -> with/checkout: the data is beside the target, not beside the link.
  const fs::path linked = root / "links" / "checkout";
  fs::create_directories(root / "links");
  fs::create_directory_symlink(with, linked);
  // links_with/checkout -> without/checkout, with links_with/shared/data beside the link.
  const fs::path linked_with = root / "links_with" / "checkout";
  fs::create_directories(root / "links_with" / "shared" / "data");
  fs::create_directory_symlink(without, linked_with);
  const fs::path cwd = root / "cwd";
  fs::create_directories(cwd / "data");

  struct Case {
    const char* what;
    fs::path checkout;
    std::string flag;
    std::optional<std::string> env;
    std::string want;  // the answer both must give
  };
  const std::vector<Case> cases = {
      {"flag first", with, "/flag/dir", std::string("/env/dir"), "/flag/dir"},
      {"relative flag kept as given", without, "rel/dir", std::nullopt, "rel/dir"},
      {"env before beside", with, "", std::string("/env/dir"), "/env/dir"},
      {"relative env kept as given", without, "", std::string("../env"), "../env"},
      {"empty env is unset: beside", with, "", std::string(""), (root / "with" / "shared" / "data").string()},
      {"beside the checkout", with, "", std::nullopt, (root / "with" / "shared" / "data").string()},
      {"./data without beside", without, "", std::nullopt, "data"},
      // A checkout reached through a symbolic link: "beside" is beside the path as given, and
      // a data folder only beside the link's target is not used (both sides used to disagree).
      {"symlinked checkout, data beside its target only", linked, "", std::nullopt, "data"},
      {"symlinked checkout, data beside the link", linked_with, "", std::nullopt,
       (root / "links_with" / "shared" / "data").string()},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    const std::string cxx = atlas::data_dir_in_order(c.flag, c.env ? c.env->c_str() : nullptr, c.checkout).string();
    CHECK(cxx == c.want);
    CHECK(shell_answer(c.checkout, c.flag, c.env, cwd) == c.want);
  }
}

TEST_CASE("data directory order: the script run on its own uses its checkout, as the binary uses its build's") {
  // Run as `bash tools/lib/data_dir.sh [FLAG]` (the Makefile and CMake do), with ATLAS_DATA_DIR
  // unset: the answer for this source tree, the binary's build_source_dir().
  atlas::ProcessOptions o;
  o.cwd = atlas::test::scratch_dir("data_dir_script");
  o.env_overrides["ATLAS_DATA_DIR"] = "";
  for (const std::string flag : {"", "/given"}) {
    CAPTURE(flag);
    const auto r = atlas::run_process_with({"bash", kScript.string(), flag}, o);
    INFO(r.err);
    REQUIRE(r.exit_status == 0);
    CHECK(r.out == atlas::data_dir_in_order(flag, nullptr, atlas::build_source_dir()).string() + "\n");
  }
}
