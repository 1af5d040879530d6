#pragma once
// The text the judge reads for one of its inputs (the gate config, a suite config): the copy
// committed at the merge-base, not the pull request's. A PR that replaced the timed metrics of
// gates/config/pr.json with a constant, or shrank a suite's work in suites/config/pr.json, used
// to be judged by its own rules; now those edits are shown and take effect once merged.
#include <filesystem>
#include <string>

#include "gates/merge_base.hpp"

namespace atlas::gates {

struct JudgeFile {
  std::string text;      ///< what the judge parses
  std::string source;    ///< for messages: "gates/config/pr.json@<commit12>" or the path as given
  bool reviewed = false; ///< true when `text` is the merge-base's copy
  /// For the summary: the file differs from its merge-base copy (and which fields), or is not
  /// committed there (then the gate cannot pass); "" when there is nothing to say.
  std::string note;
};

/// `what` names the input in the note ("gate config"). Without a merge-base (`mb` not found)
/// the file is read as given and not reviewed; the missing merge-base is reported elsewhere.
/// Throws GateError when the file cannot be read.
JudgeFile judge_file(const MergeBase& mb, const std::filesystem::path& path, const std::string& what);

}  // namespace atlas::gates
