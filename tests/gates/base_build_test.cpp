// The merge-base build cache (gates/base_build.hpp): when no build is needed (HEAD is the
// merge-base with no tracked change), and pruning old builds so <build>/gate-base does not grow
// by one worktree per commit forever.
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "gates/base_build.hpp"
#include "gates/process.hpp"
#include "tests/gates/git_repo.hpp"
#include "tests/test_data.hpp"

using namespace atlas;
using namespace atlas::gates;
using atlas::test::git;
namespace fs = std::filesystem;

namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

fs::path repo_with_commit(const std::string& name) {
  const auto repo = test::scratch_dir(name);
  git(repo, {"init", "-q"});
  std::ofstream(repo / "a.txt") << "one\n";
  git(repo, {"add", "-A"});
  git(repo, {"commit", "-q", "-m", "one"});
  return repo;
}

}  // namespace

TEST_CASE("head_is_clean_base: no merge-base build when the merge-base is HEAD with no tracked change") {
  const auto repo = repo_with_commit("gates_clean_base");
  const std::string head = trimmed(git(repo, {"rev-parse", "HEAD"}).out);
  CHECK(head_is_clean_base(repo, head));
  std::ofstream(repo / "untracked.txt") << "x\n";  // untracked files do not change the build
  CHECK(head_is_clean_base(repo, head));
  std::ofstream(repo / "a.txt") << "changed\n";  // a tracked change does
  CHECK_FALSE(head_is_clean_base(repo, head));
  git(repo, {"commit", "-q", "-am", "two"});
  CHECK_FALSE(head_is_clean_base(repo, head));  // HEAD moved past the merge-base
  CHECK(head_is_clean_base(repo, trimmed(git(repo, {"rev-parse", "HEAD"}).out)));
  CHECK_FALSE(head_is_clean_base(repo, ""));
}

TEST_CASE("prune_base_cache keeps the most recently used builds and removes the others' worktrees") {
  const auto repo = repo_with_commit("gates_prune_repo");
  const auto cache = test::scratch_dir("gates_prune_cache");
  const std::string sha = trimmed(git(repo, {"rev-parse", "HEAD"}).out);
  // Four cached "builds", oldest first; each a registered worktree with a built.ok stamp.
  const std::vector<std::string> names = {"aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc", "dddddddddddd"};
  const auto now = fs::file_time_type::clock::now();
  for (std::size_t i = 0; i < names.size(); ++i) {
    const fs::path dir = cache / names[i];
    git(repo, {"worktree", "add", "--detach", (dir / "src").string(), sha});
    fs::create_directories(dir / "src" / "build");
    std::ofstream(dir / "src" / "build" / "junk.o") << "object\n";  // untracked build output
    std::ofstream(dir / "built.ok") << sha << "\n";
    fs::last_write_time(dir / "built.ok", now - std::chrono::hours(10 - static_cast<int>(i)));
  }
  // The current build is the oldest by mtime but is always kept; keep 2 = current + the newest other.
  const auto removed = prune_base_cache(repo, cache, 2, "aaaaaaaaaaaa");
  CHECK(removed == std::vector<std::string>{"cccccccccccc", "bbbbbbbbbbbb"});
  CHECK(fs::exists(cache / "aaaaaaaaaaaa" / "src"));
  CHECK(fs::exists(cache / "dddddddddddd" / "src"));
  CHECK_FALSE(fs::exists(cache / "bbbbbbbbbbbb"));
  CHECK_FALSE(fs::exists(cache / "cccccccccccc"));
  const std::string list = git(repo, {"worktree", "list", "--porcelain"}).out;
  CHECK(list.find("bbbbbbbbbbbb") == std::string::npos);
  CHECK(list.find("cccccccccccc") == std::string::npos);
  CHECK(list.find("dddddddddddd") != std::string::npos);
  // Nothing more to remove.
  CHECK(prune_base_cache(repo, cache, 2, "aaaaaaaaaaaa").empty());
}
