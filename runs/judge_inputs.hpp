#pragma once
// What the pull-request gate judges with, read from the merge-base: the target ref (command
// line, else the CI's merge-request variables, else the merge-base's gate config, else
// origin/main), the gate config and the suite configs as committed there. The PR's edits to
// them are listed, not obeyed; an input with no merge-base copy, or a checkout whose
// merge-base cannot be found, leaves the judge unreviewed and the gate cannot pass.
#include <memory>
#include <string>
#include <vector>

#include "common/temp_dir.hpp"
#include "gates/config.hpp"
#include "gates/judge_file.hpp"
#include "gates/merge_base.hpp"
#include "gates/merge_base_check.hpp"

namespace atlas::runs {

struct JudgeInputs {
  gates::MergeBase merge_base;
  /// The gate config as judged; its suite_config and timed.suite_config name files holding the
  /// merge-base's copies (in `copies`) when those were found.
  gates::GateConfig config;
  std::vector<gates::JudgeFile> files;  ///< the gate config, then the suite configs
  std::vector<std::string> notes;       ///< changed-since-the-merge-base lines for the summary
  std::shared_ptr<TempDir> copies;
};

/// `explicit_config` is --config ("" = gates/config/<gate>.json); `in_process_suites` false
/// (--timed-only) leaves the gate's own suite config unread, `timed_suites` false (--no-timed)
/// the timed one. The checkout is the working
/// directory's, else (outside git) the one holding `baselines_dir`. Throws GateError for a config that
/// does not parse, naming its source ("gates/config/pr.json@<commit>").
JudgeInputs judge_inputs(const std::string& cli_target, const std::string& gate, const std::string& explicit_config,
                         const std::string& baselines_dir, bool in_process_suites, bool timed_suites);

/// Why a pass cannot stand ({} when it can): the merge-base check could not run in a checkout,
/// an input is not the merge-base's, or (`judged_stored`) the judged BASELINE has no merge-base
/// copy to be checked against.
std::vector<std::string> unreviewed_judge(const JudgeInputs& in, const gates::MergeBaseReport& check, bool judged_stored);

}  // namespace atlas::runs
