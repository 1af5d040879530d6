// End to end: the holes through which a pull request's own tree made a planted regression pass
// (`atlas-bench gate --timed-only` in a scratch checkout, the base side given as this same
// binary). Each case is a PR branch off "main" that edits what the judge reads; each must not
// pass. Short suites and few rounds, as in timed_gate_cli_test.cpp.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/json_file.hpp"
#include "gates/baseline.hpp"
#include "gates/judge_file.hpp"
#include "gates/process.hpp"
#include "common/build_commit.hpp"
#include "records/provenance.hpp"
#include "records/record_io.hpp"
#include "records/store.hpp"
#include "tests/built_exe.hpp"
#include "tests/gates/base_bin_wrapper.hpp"
#include "tests/gates/gate_fixtures.hpp"
#include "tests/gates/git_repo.hpp"
#include "tests/sanitized.hpp"
#include "tests/skip.hpp"
#include "tests/test_data.hpp"

using namespace atlas;
namespace fs = std::filesystem;

namespace {

const char* kSuites = R"({
  "name": "judge-holes-test", "description": "tiny", "seed": 1,
  "suites": {"decode-anatomy": {"warmup": 1, "repetitions": 3, "prompt_tokens": 8, "decode_tokens": 32}}
})";

nlohmann::json gate_config() {
  return nlohmann::json::parse(R"({
  "schema_version": 1, "gate": "pr", "suites": ["decode-anatomy"], "suite_config": "suites.json",
  "timed": {
    "suite_config": "suites.json", "suites": ["decode-anatomy"],
    "metrics": {"decode-anatomy/us_per_token": 0.05},
    "looks": [12, 20], "time_cap_s": 300,
    "max_wait_share": 0.95, "max_wait_gap": 0.95, "max_disturbed_share": 0.9
  }
})");
}

std::string exe_or_skip() {
  std::string exe = test::bench_exe_or_skip();
  if (exe.empty()) return {};
  if (test::kSanitized) {
    test::skip_case("timed gate under AddressSanitizer measures the sanitizer, not the gate");
    return {};
  }
  return exe;
}

// main: the gate config, its suite config and a BASELINE of class cpu-test (one counted metric,
// 7, with its init entry); HEAD on branch "feature".
fs::path pr_checkout(const std::string& name) {
  const fs::path repo = test::scratch_dir(name);
  test::git(repo, {"init", "-q"});
  write_file_atomic(repo / "suites.json", kSuites);
  write_json_file_atomic(repo / "gates" / "config" / "pr.json", gate_config());
  auto m = test::baseline_metric(7, {7}, records::MetricKind::counted, records::Better::lower, {0, 0}, "count");
  m.history.push_back({"c0ffee", "2026-12-02T10:00:00Z", std::nullopt, 7.0, "initial baseline", gates::HistoryAction::init, ""});
  gates::save_baseline(gates::baseline_path(repo / "baselines", "cpu-test", "pr"),
                       test::baseline_with("decode-anatomy/stage_calls_per_token/attention", m));
  test::git(repo, {"add", "-A"});
  test::git(repo, {"commit", "-q", "-m", "main"});
  test::git(repo, {"checkout", "-q", "-b", "feature"});
  return repo;
}

void loosen_baseline(const fs::path& baselines) {
  const auto file = gates::baseline_path(baselines, "cpu-test", "pr");
  auto b = gates::load_baseline(file);
  b.metrics.begin()->second.value = 70;
  b.metrics.begin()->second.history.back().new_value = 70.0;  // the history rewritten to match
  gates::save_baseline(file, b);
}

// The base side: this build, standing in for a build of the scratch repository's main (the
// merge-base of every case here), as the gate's --base-bin check requires.
gates::ProcessResult gate_with_base(const char* exe, const fs::path& cwd, const std::string& base_bin,
                                    std::vector<std::string> extra) {
  std::vector<std::string> argv = {exe,        "gate",      "--timed-only", "--base-bin", base_bin, "--machine-class",
                                   "cpu-test", "--store",   "store"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return gates::run_process(argv, cwd);
}

// The merge-base of every case here; a shallow clone has no main (and no merge-base to check).
std::string main_commit(const fs::path& repo) {
  std::string sha = gates::run_process({"git", "rev-parse", "--verify", "-q", "main"}, repo).out;
  while (!sha.empty() && (sha.back() == '\n' || sha.back() == '\r')) sha.pop_back();
  return sha.empty() ? std::string(40, '0') : sha;
}

gates::ProcessResult gate(const char* exe, const fs::path& cwd, std::vector<std::string> extra) {
  const fs::path bin = test::base_bin_wrapper(fs::path(cwd.string() + "-base-bin"), exe, test::clean_build_line(main_commit(cwd)));
  return gate_with_base(exe, cwd, bin.string(), std::move(extra));
}

}  // namespace

TEST_CASE("judge holes: the PR's timed metrics and suite config are shown, not obeyed") {
  const std::string exe_path = exe_or_skip();
  if (exe_path.empty()) return;
  const char* exe = exe_path.c_str();
  const fs::path repo = pr_checkout("gates_judge_timed_metrics");
  // The PR judges a counted constant instead of the time per token, and times less work: with
  // its own config a +200 us per token slowdown passed.
  auto cfg = gate_config();
  cfg["timed"]["metrics"] = {{"decode-anatomy/stage_calls_per_token/attention", 0.05}};
  write_json_file_atomic(repo / "gates" / "config" / "pr.json", cfg);
  auto suites = nlohmann::json::parse(kSuites);
  suites["suites"]["decode-anatomy"]["decode_tokens"] = 4;
  write_json_file_atomic(repo / "suites.json", suites);
  test::git(repo, {"commit", "-q", "-am", "judge differently"});
  const auto res = gate(exe, repo, {"--inject-decode-delay-us", "200"});
  INFO(res.out, res.err);
  CHECK(res.exit_status == 1);
  CHECK(res.out.find("decode-anatomy/us_per_token") != std::string::npos);
  CHECK(res.out.find("gate config gates/config/pr.json changed since the merge-base (/timed/metrics): judged with the "
                     "merge-base's copy") != std::string::npos);
  CHECK(res.out.find("timed suite config suites.json changed since the merge-base "
                     "(/suites/decode-anatomy/decode_tokens)") != std::string::npos);
  // --machine-class picked another class's BASELINE: said where the verdict is, and recorded.
  const std::string detected = records::collect_machine().machine_class;
  REQUIRE(detected != "cpu-test");
  CHECK(res.out.find("; machine class cpu-test given by --machine-class; this box is " + detected +
                     " (the class picks the BASELINE: baselines/cpu-test/pr.BASELINE.json)") !=
        std::string::npos);
  const auto files = records::list_records(repo / "store");
  REQUIRE(files.size() == 1);
  const auto rec = records::read_record(files[0].path);
  CHECK(rec.machine.machine_class == "cpu-test");
  CHECK(rec.machine.detected_machine_class == detected);
  // The base binary's identity is in the record too.
  CHECK(rec.verdicts["base_binary"]["built_from"] == main_commit(repo));
  CHECK(rec.verdicts["base_binary"]["checked_against"] == main_commit(repo));
  CHECK(res.err.find("base binary given (--base-bin ") != std::string::npos);
  CHECK(res.err.find(", built from " + main_commit(repo).substr(0, 12) + " (clean tree), the merge-base)") != std::string::npos);
}

TEST_CASE("judge holes: a --base-bin that is not the merge-base's clean build is refused before anything runs") {
  const std::string exe_path = exe_or_skip();
  if (exe_path.empty()) return;
  const char* exe = exe_path.c_str();
  const fs::path repo = pr_checkout("gates_judge_base_bin");
  const std::string mb = main_commit(repo);
  // The head's own binary as the base side (GATE_ARGS="--base-bin build/tools/atlas-bench"): both
  // sides the PR's code, so a planted slowdown ran as an A/A judgement.
  auto res = gate_with_base(exe, repo, exe, {"--inject-decode-delay-us", "200"});
  INFO(res.out, res.err);
  CHECK(res.exit_status == 3);
  CHECK(res.err.find(std::string("--base-bin ") + exe) != std::string::npos);
  CHECK(res.err.find("the merge-base " + mb + " of main") != std::string::npos);
  if (std::string(build_commit()) != "unknown") {  // a build from a source tarball names no commit
    CHECK(res.err.find(std::string("was built from commit ") + build_commit() + ", not the merge-base " + mb) !=
          std::string::npos);
  }
  CHECK(res.out.find("result:") == std::string::npos);  // refused, not judged
  // The right commit but a dirty tree: not the merge-base's code.
  const fs::path dirty = test::base_bin_wrapper(test::scratch_dir("gates_judge_base_bin_dirty"), exe,
                                                "atlas-bench 0.1.0 (commit " + mb + ", dirty tree)");
  res = gate_with_base(exe, repo, dirty.string(), {});
  INFO(res.out, res.err);
  CHECK(res.exit_status == 3);
  CHECK(res.err.find("--base-bin " + dirty.string() + " was built from " + mb +
                     " with uncommitted changes (dirty tree)") != std::string::npos);
  // An older build that names no commit.
  const fs::path old = test::base_bin_wrapper(test::scratch_dir("gates_judge_base_bin_old"), exe, "atlas-bench 0.1.0");
  res = gate_with_base(exe, repo, old.string(), {});
  INFO(res.out, res.err);
  CHECK(res.exit_status == 3);
  CHECK(res.err.find("--base-bin " + old.string() + " does not say which commit it was built from (its --version "
                     "printed \"atlas-bench 0.1.0\"), so nothing ties it to the merge-base " + mb + " of main") !=
        std::string::npos);
  // A missing file.
  res = gate_with_base(exe, repo, (repo / "no-such-binary").string(), {});
  CHECK(res.exit_status == 3);
  CHECK(res.err.find("--base-bin " + (repo / "no-such-binary").string() + ": no such file") != std::string::npos);
}

TEST_CASE("judge holes: \"target_branch\": \"HEAD\" in the PR's gate config does not pick the merge-base") {
  const std::string exe_path = exe_or_skip();
  if (exe_path.empty()) return;
  const char* exe = exe_path.c_str();
  const fs::path repo = pr_checkout("gates_judge_target_head");
  auto cfg = gate_config();
  cfg["target_branch"] = "HEAD";  // merge-base HEAD HEAD = HEAD: the BASELINE compared with itself
  cfg["timed"]["looks"] = {8};
  write_json_file_atomic(repo / "gates" / "config" / "pr.json", cfg);
  loosen_baseline(repo / "baselines");
  test::git(repo, {"commit", "-q", "-am", "loosen"});
  const auto res = gate(exe, repo, {});
  INFO(res.out, res.err);
  CHECK(res.exit_status == 1);
  CHECK(res.out.find("merge-base (main @ ") != std::string::npos);
  CHECK(res.out.find("value loosened from 7.0 to 70.0") != std::string::npos);
}

TEST_CASE("judge holes: a shallow checkout fails closed instead of skipping the merge-base check") {
  const std::string exe_path = exe_or_skip();
  if (exe_path.empty()) return;
  const char* exe = exe_path.c_str();
  const fs::path repo = pr_checkout("gates_judge_shallow");
  auto cfg = gate_config();
  cfg["timed"]["looks"] = {8};
  write_json_file_atomic(repo / "gates" / "config" / "pr.json", cfg);
  loosen_baseline(repo / "baselines");
  test::git(repo, {"commit", "-q", "-am", "loosen"});
  const fs::path clone = test::scratch_dir("gates_judge_shallow_clone");
  test::git(clone, {"clone", "-q", "--depth", "1", "--branch", "feature", "file://" + repo.string(), "c"});
  const auto res = gate(exe, clone / "c", {});
  INFO(res.out, res.err);
  CHECK(res.exit_status == 2);
  CHECK(res.out.find("merge-base check could not run: target branch not found (tried origin/main and main, from "
                     "default); this is a shallow checkout") != std::string::npos);
  CHECK(res.out.find("the result cannot pass") != std::string::npos);
}

TEST_CASE("judge holes: --baselines-dir outside the checkout (GATE_ARGS) is checked against the committed BASELINE") {
  const std::string exe_path = exe_or_skip();
  if (exe_path.empty()) return;
  const char* exe = exe_path.c_str();
  const fs::path repo = pr_checkout("gates_judge_baselines_dir");
  auto cfg = gate_config();
  cfg["timed"]["looks"] = {8};
  write_json_file_atomic(repo / "gates" / "config" / "pr.json", cfg);
  test::git(repo, {"commit", "-q", "-am", "fewer looks"});
  const fs::path outside = fs::temp_directory_path() /
                           ("atlas-judge-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  fs::copy(repo / "baselines", outside, fs::copy_options::recursive);
  loosen_baseline(outside);
  const auto res = gate(exe, repo, {"--baselines-dir", outside.string()});
  fs::remove_all(outside);
  INFO(res.out, res.err);
  CHECK(res.exit_status == 1);
  CHECK(res.out.find("(judged in place of baselines/cpu-test/pr.BASELINE.json) decode-anatomy/stage_calls_per_token/"
                     "attention: value loosened from 7.0 to 70.0") != std::string::npos);
}

TEST_CASE("judge file: the merge-base's copy, with the changed fields named; an uncommitted file is not reviewed") {
  const fs::path repo = test::scratch_dir("gates_judge_file");
  test::git(repo, {"init", "-q"});
  write_file_atomic(repo / "suites.json", kSuites);
  test::git(repo, {"add", "-A"});
  test::git(repo, {"commit", "-q", "-m", "main"});
  auto shrunk = nlohmann::json::parse(kSuites);
  shrunk["suites"]["decode-anatomy"]["repetitions"] = 1;
  write_json_file_atomic(repo / "suites.json", shrunk);
  write_file_atomic(repo / "new.json", "{}");
  const auto mb = gates::find_merge_base(repo, gates::choose_target("main", ""));
  REQUIRE(mb.found());
  const auto f = gates::judge_file(mb, repo / "suites.json", "suite config");
  CHECK(f.reviewed);
  CHECK(f.text == kSuites);
  CHECK(f.note == "suite config suites.json changed since the merge-base (/suites/decode-anatomy/repetitions): judged "
                  "with the merge-base's copy; the change takes effect once merged");
  const auto n = gates::judge_file(mb, repo / "new.json", "gate config");
  CHECK_FALSE(n.reviewed);
  CHECK(n.note.find("is not committed at the merge-base") != std::string::npos);
}

TEST_CASE("judge holes: a --config outside the checkout (GATE_ARGS) is used as given but cannot pass") {
  const std::string exe_path = exe_or_skip();
  if (exe_path.empty()) return;
  const char* exe = exe_path.c_str();
  const fs::path repo = pr_checkout("gates_judge_config_outside");
  auto cfg = gate_config();
  cfg["timed"]["looks"] = {8};
  cfg["timed"]["suite_config"] = (repo / "suites.json").string();
  const fs::path outside = fs::temp_directory_path() /
                           ("atlas-judge-config-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) +
                            ".json");
  write_json_file_atomic(outside, cfg);
  const auto res = gate(exe, repo, {"--config", outside.string()});
  fs::remove(outside);
  INFO(res.out, res.err);
  CHECK(res.exit_status == 2);
  CHECK(res.out.find("gate config " + outside.string() +
                     " lies outside the checkout, so not at the merge-base ") != std::string::npos);
  CHECK(res.out.find(": judged with it as given, so the result cannot pass") != std::string::npos);
}
