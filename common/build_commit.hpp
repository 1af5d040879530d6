#pragma once
// Which commit this binary was built from, compiled in at build time (cmake/build_commit.cmake),
// and the one line that says it: `atlas-bench --version` prints it, and the gate reads it back
// from a prebuilt merge-base binary (--base-bin) to check that the binary is the merge-base's
// build. A record's git block says what the checkout was at when it ran, which for a binary
// copied from elsewhere (a CI artifact) says nothing about the binary itself.
#include <optional>
#include <string>
#include <string_view>

namespace atlas {

/// The full sha of HEAD of the source tree when this binary was built; "unknown" outside a git
/// checkout (a source tarball) or without git.
const char* build_commit() noexcept;
/// Whether that tree had tracked or untracked (not ignored) changes, so the binary may not be
/// that commit's code. False when the commit is unknown.
bool build_tree_dirty() noexcept;

/// "commit <sha>, clean tree" / "commit <sha>, dirty tree" / "commit unknown".
std::string build_commit_text();

struct ReportedBuild {
  std::string commit;  ///< 40 lower-case hex digits
  bool dirty = false;
};

/// Finds "commit <40 hex>, clean tree" or "..., dirty tree" in a binary's --version output;
/// nullopt when there is none (an older build, "commit unknown", or something else entirely).
std::optional<ReportedBuild> parse_build_commit(std::string_view version_output);

}  // namespace atlas
