#pragma once
// git in a gate test's scratch repository: a fixed identity, no signing and branch "main", so
// commits work on any machine (a CI runner has no git identity or may sign by default).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/process.hpp"

namespace atlas::test {

/// Runs `git args...` in `repo` and REQUIREs exit status 0 (a failure shows git's stderr).
inline ProcessResult git(const std::filesystem::path& repo, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git", "-c", "user.name=gate-test", "-c", "user.email=gate-test@example.invalid",
                                   "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = run_process(argv, repo);
  INFO("git " << args.front() << ": " << r.err);
  REQUIRE(r.exit_status == 0);
  return r;
}

}  // namespace atlas::test
