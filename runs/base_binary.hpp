#pragma once
// The merge-base side of a gate run, found once and used by both judgements against it: the
// counted metrics (instructions under callgrind, runs/counted_base.hpp) and the timed ones
// (runs/timed_gate.hpp). Either --base-bin, or this very binary when the merge-base is HEAD
// with no tracked change (an A/A run), or the merge-base built and cached per commit by
// gates::build_base.
#include <string>

#include "gates/merge_base_check.hpp"

namespace atlas::runs {

struct BaseBinaryOptions {
  std::string base_bin;        ///< --base-bin: a prebuilt base binary (CI artifact); skips the build
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
