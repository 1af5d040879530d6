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
//   - history entries present at the merge-base were deleted (history is append-only);
//   - a hash (fingerprint) value changed at all, or a suite's identity changed, without an accept;
//   - anything under the baselines folder is a symlink (a link to a loosened copy elsewhere).
// An accept entry licenses exactly the moves it names (old -> new value, tolerance from -> to,
// unit/kind/direction from -> to). New files are checked against their own history. Tightened
// values pass. Like Betterer's `ci` mode, but loosening is allowed when it is reviewed.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/baseline.hpp"
#include "gates/merge_base.hpp"

namespace atlas::gates {

struct BaselineViolation {
  std::string file;    ///< path relative to the repository root
  std::string metric;  ///< "" for file-level problems
  std::string problem;
};

struct MergeBaseReport {
  bool ran = false;           ///< false when not in a git checkout or no target branch exists
  /// false when this is a git checkout but its target or merge-base is missing (a shallow
  /// clone), or outside git when a target was named (--target-branch, GITHUB_BASE_REF, ...):
  /// nothing was checked, so the gate cannot pass (inconclusive). Outside git with no target
  /// named it stays true: a note says the check was skipped.
  bool conclusive = true;
  std::string skipped_reason;
  std::string target;         ///< the ref actually used (after the origin/main -> main fallback)
  std::string base_commit;
  std::vector<std::string> files_checked;
  std::vector<std::string> notes;  ///< new files, files deleted since the merge-base
  std::vector<BaselineViolation> violations;
  /// Every accept, remove, unfreeze and identity change since the merge-base, one line each
  /// ("<file> <metric>: accept 100 -> 120, tolerance ... : \"reason\""): the reviewer reads
  /// them beside the verdict, whether or not they were licensed.
  std::vector<std::string> changes;
  /// The BASELINE the gate judged with ("" when none): the repository path its merge-base
  /// copy was read from, and whether that copy existed. A judged file with no merge-base copy
  /// (new, or outside the checkout through --baselines-dir) is nobody's reviewed floor yet.
  std::string judged_file;
  bool judged_file_at_merge_base = false;
  bool ok() const { return violations.empty(); }
};

/// The violations and the listed changes of one file.
struct VersionCheck {
  std::vector<BaselineViolation> violations;
  std::vector<std::string> changes;
};

/// Pure part: `current` against `base` (both parsed), for one file.
VersionCheck compare_baseline_versions(const Baseline& base, const Baseline& current, const std::string& file);

/// The BASELINE a gate judges with and the repository path of its reviewed copy
/// ("baselines/<class>/<gate>.BASELINE.json"): a --baselines-dir elsewhere is compared with that.
struct JudgedBaseline {
  std::filesystem::path file;
  std::string repo_path;
};

/// Checks every BASELINE under `baselines_dir` (inside mb's checkout) and `judged`, when given,
/// against the merge-base `mb`. Throws GateError when a current or merge-base BASELINE does not
/// parse.
MergeBaseReport check_merge_base(const MergeBase& mb, const std::filesystem::path& baselines_dir,
                                 const JudgedBaseline* judged = nullptr);
/// The same, finding the merge-base from the checkout containing `baselines_dir`; `target` ""
/// means "origin/main, falling back to main".
MergeBaseReport check_merge_base(const std::filesystem::path& baselines_dir, const std::string& target);

nlohmann::json to_json(const MergeBaseReport& r);

}  // namespace atlas::gates
