// The judge's inputs read from the merge-base (runs/judge_inputs.hpp): what the suites read by
// name while they run (a trace, the bfcl suite's config) comes from the merge-base's copy of the
// suites folder, and a PR's edit to it is listed.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/atomic_file.hpp"
#include "runs/judge_inputs.hpp"
#include "tests/gates/git_repo.hpp"
#include "tests/test_data.hpp"

using namespace atlas;
namespace fs = std::filesystem;

namespace {

struct Environment {
  Environment(const fs::path& cwd, const std::string& suites_dir) : old_cwd(fs::current_path()) {
    if (const char* e = std::getenv("ATLAS_SUITES_DIR")) old_suites = e;
    ::setenv("ATLAS_SUITES_DIR", suites_dir.c_str(), 1);
    fs::current_path(cwd);
  }
  ~Environment() {
    fs::current_path(old_cwd);
    if (old_suites.empty()) {
      ::unsetenv("ATLAS_SUITES_DIR");
    } else {
      ::setenv("ATLAS_SUITES_DIR", old_suites.c_str(), 1);
    }
  }
  fs::path old_cwd;
  std::string old_suites;
};

}  // namespace

TEST_CASE("judge inputs: a trace the PR shrank is read from the merge-base, and the change is listed") {
  const fs::path repo = test::scratch_dir("runs_judge_inputs");
  test::git(repo, {"init", "-q"});
  write_file_atomic(repo / "gates" / "config" / "pr.json",
                    R"({"schema_version": 1, "gate": "pr", "suites": ["agentic"], "suite_config": "s"})");
  write_file_atomic(repo / "suites" / "config" / "s.json", R"({"name": "s", "suites": {}})");
  write_file_atomic(repo / "suites" / "traces" / "t.json", R"({"turns": [1, 2, 3, 4]})");
  test::git(repo, {"add", "-A"});
  test::git(repo, {"commit", "-q", "-m", "main"});
  test::git(repo, {"checkout", "-q", "-b", "feature"});
  write_file_atomic(repo / "suites" / "traces" / "t.json", R"({"turns": [1]})");  // less work per run

  const Environment env(repo, (repo / "suites").string());
  const runs::JudgeInputs in = runs::judge_inputs("main", "pr", "", "baselines", true, false);
  REQUIRE(in.merge_base.found());
  CHECK(in.files.at(1).source == "suites/config/s.json@" + in.merge_base.commit.substr(0, 12));
  REQUIRE(in.notes.size() == 1);
  CHECK(in.notes[0] == "suite input suites/traces/t.json changed since the merge-base: judged with the merge-base's "
                       "copy; the change takes effect once merged");
  // The suites resolve names in the merge-base's copy from now on (and so do the base-side
  // processes, which inherit the variable).
  const char* dir = std::getenv("ATLAS_SUITES_DIR");
  REQUIRE(dir != nullptr);
  CHECK(fs::path(dir) != repo / "suites");
  CHECK(read_file(fs::path(dir) / "traces" / "t.json") == R"({"turns": [1, 2, 3, 4]})");
  CHECK(read_file(fs::path(dir) / "config" / "s.json") == R"({"name": "s", "suites": {}})");
}
