#include "runs/judge_inputs.hpp"

#include <filesystem>

#include "common/atomic_file.hpp"
#include "common/build_paths.hpp"
#include "common/json_file.hpp"
#include "gates/error.hpp"
#include "suites/resources.hpp"

namespace atlas::runs {
namespace {

namespace fs = std::filesystem;
using namespace atlas::gates;

GateConfig parse_config(const JudgeFile& f) {
  nlohmann::json j;
  try {
    j = parse_json_text(f.text, f.source);
  } catch (const InputError& e) {
    throw GateError(e.what());
  }
  return parse_gate_config(j, f.source);
}

// The checkout being judged is the working directory's; the baselines folder's only when the
// working directory is outside git. A --baselines-dir elsewhere never picks the checkout.
MergeBase find_for(const TargetRef& t, const std::string& baselines_dir) {
  MergeBase mb = find_merge_base(fs::current_path(), t);
  if (mb.state == MergeBaseState::not_git) mb = find_merge_base(baselines_dir, t);
  return mb;
}

// Reads suite config `name` as the judge sees it; when it is the merge-base's copy, writes that
// copy to `copies` and returns its path (the suites library reads files by path).
std::string judged_suite_config(JudgeInputs& in, const std::string& name, const std::string& what) {
  const fs::path path = suites::resolve_resource(name, "config");
  JudgeFile f = judge_file(in.merge_base, path, what);
  std::string out = name;
  if (f.reviewed) {
    if (!in.copies) in.copies = std::make_shared<TempDir>("atlas-judge-");
    const fs::path copy = in.copies->path() / (std::to_string(in.files.size()) + "-" + path.filename().string());
    write_file_atomic(copy, f.text);
    out = copy.string();
  }
  if (f.reviewed && !f.note.empty()) in.notes.push_back(f.note);
  in.files.push_back(std::move(f));
  return out;
}

}  // namespace

JudgeInputs judge_inputs(const std::string& cli_target, const std::string& gate, const std::string& explicit_config,
                         const std::string& baselines_dir, bool in_process_suites, bool timed_suites) {
  JudgeInputs in;
  const fs::path config_path = gate_config_path(gate, explicit_config, build_source_dir());
  TargetRef target = choose_target(cli_target, "");
  in.merge_base = find_for(target, baselines_dir);
  JudgeFile config = judge_file(in.merge_base, config_path, "gate config");
  in.config = parse_config(config);
  // The config's own target_branch counts only from the reviewed copy, and only when neither
  // the command line nor CI named the target.
  if (target.source == "default" && config.reviewed && in.config.target_branch != "origin/main") {
    target = choose_target("", in.config.target_branch);
    in.merge_base = find_for(target, baselines_dir);
    config = judge_file(in.merge_base, config_path, "gate config");
    in.config = parse_config(config);
  }
  if (config.reviewed && !config.note.empty()) in.notes.push_back(config.note);
  in.files.push_back(std::move(config));
  if (in_process_suites) in.config.suite_config = judged_suite_config(in, in.config.suite_config, "suite config");
  if (timed_suites && in.config.timed.enabled)
    in.config.timed.suite_config = judged_suite_config(in, in.config.timed.suite_config, "timed suite config");
  return in;
}

std::vector<std::string> unreviewed_judge(const JudgeInputs& in, const MergeBaseReport& check, bool judged_stored) {
  std::vector<std::string> out;
  if (!check.conclusive) {
    out.push_back("the merge-base check could not run (" + check.skipped_reason +
                  "), so nothing reviewed this judge: the result cannot pass");
    return out;
  }
  if (!in.merge_base.found()) return out;
  for (const auto& f : in.files)
    if (!f.reviewed) out.push_back(f.note);
  if (judged_stored && !check.judged_file_at_merge_base)
    out.push_back("the judged BASELINE " + (check.judged_file.empty() ? std::string("(none)") : check.judged_file) +
                  " is not committed at the merge-base " + in.merge_base.commit.substr(0, 12) +
                  ": it is nobody's reviewed floor yet, so the result cannot pass");
  return out;
}

}  // namespace atlas::runs
