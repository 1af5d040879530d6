#pragma once
// Review guard for BASELINE files: every baseline under `baselines_dir` is compared with its
// version at `git merge-base HEAD <target>` (read with `git show <base>:<path>`). The check
// fails when a gate was loosened since then without an explicit history entry added on the
// branch:
//   - a metric value moved in the worse direction, its tolerance grew, or its unit/kind/
//     direction changed -> needs a new "accept" entry (for a value, one whose `new` is the
//     current value);
//   - a metric disappeared -> needs a new file-level "remove" entry naming it;
//   - a frozen file or metric changed or was unfrozen -> needs a new "unfreeze" entry;
//   - history entries present at the merge-base were deleted (history is append-only).
// New files and tightened values pass. Like Betterer's `ci` mode, but loosening is allowed
// when it is reviewed.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/baseline.hpp"

namespace atlas::gates {

struct BaselineViolation {
  std::string file;    ///< path relative to the repository root
  std::string metric;  ///< "" for file-level problems
  std::string problem;
};

struct MergeBaseReport {
  bool ran = false;           ///< false when not in a git checkout or no target branch exists
  std::string skipped_reason;
  std::string target;         ///< the ref actually used (after the origin/main -> main fallback)
  std::string base_commit;
  std::vector<std::string> files_checked;
  std::vector<std::string> notes;  ///< new files, files deleted since the merge-base
  std::vector<BaselineViolation> violations;
  bool ok() const { return violations.empty(); }
};

/// Pure part: the violations of `current` against `base` (both parsed), for one file.
std::vector<BaselineViolation> compare_baseline_versions(const Baseline& base, const Baseline& current,
                                                         const std::string& file);

/// Runs the check in the git checkout containing `baselines_dir`. `target` "" means
/// "origin/main, falling back to main". Throws GateError when a current or merge-base BASELINE
/// does not parse.
MergeBaseReport check_merge_base(const std::filesystem::path& baselines_dir, const std::string& target);

nlohmann::json to_json(const MergeBaseReport& r);

}  // namespace atlas::gates
