#include "runs/judge_inputs.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "common/atomic_file.hpp"
#include "common/build_paths.hpp"
#include "common/json_file.hpp"
#include "gates/error.hpp"
#include "gates/process.hpp"
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

// What the suites read by name while they run (a trace of the agentic suite, the bfcl suite's
// "bfcl-pr" config) comes from the suites folder, which a PR edits like any file: a shrunk trace
// would hide a regression in the agentic counts. So the merge-base's suites/config and
// suites/traces are copied out and $ATLAS_SUITES_DIR names the copy, for this process and the
// base-side processes it starts; a file the PR changed is listed.
void judged_suites_folder(JudgeInputs& in) {
  const auto rel = path_in_checkout(in.merge_base, suites::suites_resource_dir());
  if (!in.merge_base.found() || !rel) return;  // outside the checkout the configs are unreviewed already
  const auto listed = run_process({"git", "ls-tree", "-r", "--name-only", in.merge_base.commit, "--", *rel + "/config",
                                   *rel + "/traces"},
                                  in.merge_base.root);
  if (listed.exit_status != 0 || listed.out.empty()) return;
  if (!in.copies) in.copies = std::make_shared<TempDir>("atlas-judge-");
  const fs::path folder = in.copies->path() / "suites";
  std::size_t start = 0;
  while (start < listed.out.size()) {
    const auto end = listed.out.find('\n', start);
    const std::string file = listed.out.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? listed.out.size() : end + 1;
    const auto text = text_at_merge_base(in.merge_base, file);
    if (!text) continue;
    const std::string inside = fs::path(file).lexically_relative(*rel).generic_string();
    write_file_atomic(folder / inside, *text);
    std::error_code ec;
    const fs::path here = in.merge_base.root / file;
    const std::string now = fs::exists(here, ec) ? read_file(here) : std::string();
    const bool noted = std::any_of(in.files.begin(), in.files.end(),
                                   [&](const JudgeFile& f) { return f.source.rfind(file + "@", 0) == 0; });
    if (now != *text && !noted)
      in.notes.push_back("suite input " + file + " changed since the merge-base: judged with the merge-base's copy; "
                         "the change takes effect once merged");
  }
  ::setenv("ATLAS_SUITES_DIR", folder.c_str(), 1);
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
  judged_suites_folder(in);  // after the configs: they were judged where they are committed
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
