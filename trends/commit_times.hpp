#pragma once
// Commit order from git: a report orders a line's commits by committer date when the store sits
// beside the checkout that made it (a nightly of one repository), else by their records' times.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace atlas::trends {

/// A lookup of committer time (`git show -s --format=%ct <sha>`, seconds since the epoch) in
/// the checkout at `repo_dir`, each commit asked once. Nullopt for a name that is not a hex
/// sha, a commit git does not know (a record of a fork's branch), or no git / no checkout.
std::function<std::optional<std::int64_t>(const std::string& sha)> git_commit_times(const std::filesystem::path& repo_dir);

}  // namespace atlas::trends
