#pragma once
// The merge-base of HEAD and the target branch, and the files as they were there. Everything
// that shapes a verdict (the gate and suite configs, the BASELINE's floor) is judged from this
// commit, which the target branch reviewed, never from the pull request's tree alone.
#include <filesystem>
#include <optional>
#include <string>

#include "gates/target_ref.hpp"

namespace atlas::gates {

enum class MergeBaseState {
  not_git,      ///< not inside a git checkout: nothing to compare with (a tarball, a scratch folder)
  unavailable,  ///< a checkout whose target or merge-base cannot be found (shallow clone, unfetched target)
  found,
};

struct MergeBase {
  MergeBaseState state = MergeBaseState::not_git;
  std::filesystem::path root;  ///< the checkout's top level (canonical)
  std::string target;          ///< the ref used
  std::string target_source;   ///< TargetRef::source
  std::string commit;          ///< full sha
  std::string why_not;         ///< for not_git and unavailable: what failed and how to fix it
  bool found() const { return state == MergeBaseState::found; }
};

/// Finds the checkout containing `dir` and `git merge-base HEAD <target>` for the first of
/// `target.candidates` that exists. A shallow checkout whose target or merge-base is missing
/// says so (the usual cause on CI: actions/checkout's default fetch-depth of 1).
MergeBase find_merge_base(const std::filesystem::path& dir, const TargetRef& target);

/// `rel` (relative to mb.root, '/'-separated) as committed at the merge-base; nullopt when the
/// file is not there (or mb was not found).
std::optional<std::string> text_at_merge_base(const MergeBase& mb, const std::string& rel);

/// `path` relative to mb.root ('/'-separated) when it lies inside the checkout, else nullopt.
/// Symlinks are resolved first, so a link inside the checkout to a file outside is outside.
std::optional<std::string> path_in_checkout(const MergeBase& mb, const std::filesystem::path& path);

}  // namespace atlas::gates
