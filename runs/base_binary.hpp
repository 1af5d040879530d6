#pragma once
// The merge-base side of a gate run, found once and used by both judgements against it: the
// counted metrics (instructions under callgrind, runs/counted_base.hpp) and the timed ones
// (runs/timed_gate.hpp). Either --base-bin, or this very binary when the merge-base is HEAD
// with no tracked change (an A/A run), or the merge-base built and cached per commit by
// gates::build_base.
#include <optional>
#include <string>

#include "common/build_commit.hpp"
#include "gates/merge_base_check.hpp"

namespace atlas::runs {

/// What a prebuilt base binary (--base-bin) says it was built from: `<path> --version`.
struct GivenBase {
  std::string path;                       ///< as given
  std::optional<ReportedBuild> reported;  ///< nullopt: its --version names no commit
  std::string version_output;             ///< first line of its --version output, for messages
  std::string checked_against;            ///< the merge-base commit it matched; "" when none was known
};

/// Runs `<path> --version` (no shell). Throws GateError naming --base-bin and the path when the
/// file is missing or does not run.
GivenBase identify_given_base(const std::string& path);

/// The base side must be the merge-base's build: a head binary given as --base-bin (GATE_ARGS in
/// the PR's Makefile) made every judgement against the merge-base an A/A run. Throws GateError
/// (exit 3, before any suite runs) naming --base-bin, the path and both commits when `merge_base`
/// is known and the binary reports another commit, a dirty tree, or no commit at all; sets
/// `checked_against` when it matches. With no merge-base (outside git) nothing is compared.
void require_merge_base_build(GivenBase& given, const std::string& merge_base_commit, const std::string& target);

/// One line for the summary: "built from <sha12> (clean tree), the merge-base" and the like.
std::string given_base_text(const GivenBase& given);

struct BaseBinaryOptions {
  std::string base_bin;        ///< --base-bin: a prebuilt base binary (CI artifact); skips the build
  std::string base_bin_identity;  ///< given_base_text of it, for the build line ("" when unchecked)
  std::string base_cache_dir;  ///< --base-cache-dir ("" = gates::default_base_cache_dir)
  int build_jobs = 0;
};

struct BaseBinary {
  std::string head_binary;  ///< this program (/proc/self/exe)
  std::string path;         ///< the base side's binary; "" when there is none (error says why)
  std::string commit;       ///< the merge-base commit ("" with --base-bin)
  bool same_as_head = false;  ///< the merge-base is HEAD with no tracked change: this binary runs both sides
  std::string build_line;   ///< "merge-base build: ..." (printed on its own line, not part of any judgement's time)
  std::string error;        ///< non-empty: no base binary (no merge-base, a failed build, a missing --base-bin)
};

/// Finds or builds the base binary. Never throws for a missing merge-base or a failed build:
/// the reason is in `error`. Prints the build progress line to stderr.
BaseBinary resolve_base_binary(const BaseBinaryOptions& o, const gates::MergeBaseReport& merge_base);

/// This program's own path (/proc/self/exe), "" when it cannot be read.
std::string self_exe();

}  // namespace atlas::runs
