#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gates/merge_base_check.hpp"
#include "gates/error.hpp"
#include "gates/target_ref.hpp"
#include "gates/process.hpp"
#include "gates/ratchet.hpp"
#include "tests/gates/gate_fixtures.hpp"
#include "tests/gates/git_repo.hpp"
#include "tests/test_data.hpp"

using namespace atlas;
using namespace atlas::gates;
using atlas::test::git;

namespace {

const ChangeStamp kStamp{"feature", "2026-11-29T15:00:00Z"};

// A repo whose main branch holds baselines/cpu-test/pr.BASELINE.json with ttft/p50 = 100 ms,
// checked out on branch "feature".
std::filesystem::path repo_with_baseline(const std::string& name, bool frozen = false) {
  const auto repo = test::scratch_dir(name);
  git(repo, {"init", "-q"});
  auto b = test::baseline_with("ttft/p50", test::baseline_metric(100, test::spread(100, 2, 6)));
  b.metrics["ttft/launches"] =
      test::baseline_metric(7, {7}, records::MetricKind::counted, records::Better::lower, {0, 0}, "count");
  b.frozen = frozen;
  save_baseline(baseline_path(repo / "baselines", "cpu-test", "pr"), b);
  git(repo, {"add", "-A"});
  git(repo, {"commit", "-q", "-m", "baseline"});
  git(repo, {"checkout", "-q", "-b", "feature"});
  return repo;
}

Baseline load(const std::filesystem::path& repo) { return load_baseline(baseline_path(repo / "baselines", "cpu-test", "pr")); }
void save(const std::filesystem::path& repo, const Baseline& b) {
  save_baseline(baseline_path(repo / "baselines", "cpu-test", "pr"), b);
}

// A BASELINE for class h200 (absent at the merge-base) whose ttft/p50 is `value`, with one init
// history entry that wrote `initial`.
Baseline new_h200_file(double value, double initial) {
  auto m = test::baseline_metric(value, {});
  m.history.push_back({"feature", "2026-11-29T15:00:00Z", std::nullopt, initial, "initial baseline", HistoryAction::init, ""});
  auto b = test::baseline_with("ttft/p50", m);
  b.machine_class = "h200";
  return b;
}

}  // namespace

TEST_CASE("merge-base check: tightened value passes") {
  const auto repo = repo_with_baseline("gates_mb_tight");
  auto b = load(repo);
  b.metrics["ttft/p50"].value = 90;
  save(repo, b);
  git(repo, {"commit", "-q", "-am", "tighten"});
  const auto r = check_merge_base(repo / "baselines", "main");
  CHECK(r.ran);
  CHECK(r.target == "main");
  CHECK(r.files_checked == std::vector<std::string>{"baselines/cpu-test/pr.BASELINE.json"});
  CHECK(r.ok());
}

TEST_CASE("merge-base check: loosened without accept fails, naming file, metric and values") {
  const auto repo = repo_with_baseline("gates_mb_loose");
  auto b = load(repo);
  b.metrics["ttft/p50"].value = 120;
  save(repo, b);  // uncommitted edits count too: the working tree is what would be committed
  const auto r = check_merge_base(repo / "baselines", "");  // "" -> origin/main, falls back to main
  CHECK(r.target == "main");
  REQUIRE(r.violations.size() == 1);
  CHECK(r.violations[0].file == "baselines/cpu-test/pr.BASELINE.json");
  CHECK(r.violations[0].metric == "ttft/p50");
  CHECK(r.violations[0].problem.find("loosened from 100.0 to 120.0") != std::string::npos);
  CHECK(!r.ok());
}

TEST_CASE("merge-base check: loosened with an accept entry passes") {
  const auto repo = repo_with_baseline("gates_mb_accept");
  auto b = load(repo);
  auto slow = test::record_with("ttft", "p50", test::metric(test::spread(120, 2, 6)));
  accept(b, "ttft/p50", slow, "slower but correct", test::test_config(), kStamp);
  save(repo, b);
  git(repo, {"commit", "-q", "-am", "accept"});
  CHECK(check_merge_base(repo / "baselines", "main").ok());

  // ...but an accept for one value does not cover a later hand edit to a worse one.
  b.metrics["ttft/p50"].value = 150;
  save(repo, b);
  CHECK(!check_merge_base(repo / "baselines", "main").ok());
}

TEST_CASE("merge-base check: a new BASELINE file passes and is noted") {
  const auto repo = repo_with_baseline("gates_mb_new");
  save_baseline(baseline_path(repo / "baselines", "h200", "pr"), new_h200_file(5, 5));
  const auto r = check_merge_base(repo / "baselines", "main");
  CHECK(r.ok());
  CHECK(r.files_checked.size() == 2);
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0] == "baselines/h200/pr.BASELINE.json: new since the merge-base (each value checked against its own history)");
}

TEST_CASE("merge-base check: a BASELINE new since the merge-base and loosened by hand fails on its own history") {
  // Nothing at the merge-base to compare with: the file's history is the witness. `baseline
  // init` wrote 5 ms; a hand edit to 9 ms (a loosened gate nobody reviewed) used to pass.
  const auto repo = repo_with_baseline("gates_mb_new_loose");
  auto b = new_h200_file(9, 5);
  // A metric without any history entry was never written by init, ratchet or accept either.
  b.metrics["ttft/launches"] = test::baseline_metric(3, {3}, records::MetricKind::counted, records::Better::lower, {0, 0}, "count");
  save_baseline(baseline_path(repo / "baselines", "h200", "pr"), b);
  const auto r = check_merge_base(repo / "baselines", "main");
  CHECK_FALSE(r.ok());
  REQUIRE(r.violations.size() == 2);
  CHECK(r.violations[0].file == "baselines/h200/pr.BASELINE.json");
  CHECK(r.violations[0].metric == "ttft/launches");
  CHECK(r.violations[0].problem.find("has no history entry that set it") != std::string::npos);
  CHECK(r.violations[1].metric == "ttft/p50");
  CHECK(r.violations[1].problem ==
        "new since the merge-base, and its value 9.0 does not match its history: the last entry (init "
        "2026-11-29T15:00:00Z feature) set it to 5.0; edited by hand? A value moves only with `atlas-bench baseline "
        "ratchet` or `accept`");
}

TEST_CASE("merge-base check: removed metric, loosened tolerance, deleted history and frozen edits fail") {
  const auto repo = repo_with_baseline("gates_mb_other");
  auto b = load(repo);
  b.metrics.erase("ttft/launches");
  b.metrics["ttft/p50"].tolerance.relative = 0.5;
  save(repo, b);
  auto r = check_merge_base(repo / "baselines", "main");
  REQUIRE(r.violations.size() == 2);
  CHECK(r.violations[0].metric == "ttft/launches");  // base metrics in key order: launches < p50
  CHECK(r.violations[1].problem.find("tolerance loosened") != std::string::npos);

  // A reviewed removal passes.
  git(repo, {"checkout", "-q", "--", "."});
  b = load(repo);
  remove_metric(b, "ttft/launches", "retired", kStamp);
  save(repo, b);
  CHECK(check_merge_base(repo / "baselines", "main").ok());

  const auto frozen_repo = repo_with_baseline("gates_mb_frozen", true);
  b = load(frozen_repo);
  b.metrics["ttft/p50"].value = 90;  // even tightening: a frozen file never moves
  save(frozen_repo, b);
  r = check_merge_base(frozen_repo / "baselines", "main");
  REQUIRE(r.violations.size() == 1);
  CHECK(r.violations[0].problem.find("frozen") != std::string::npos);
}

TEST_CASE("merge-base check: skipped outside git and for an unknown target") {
  const auto dir = test::scratch_dir("gates_mb_nogit");
  std::filesystem::create_directories(dir / "baselines");
  // The scratch dir may sit inside a checkout (the build tree), so use a target that cannot exist.
  const auto r = check_merge_base(dir / "baselines", "no-such-branch-xyz");
  CHECK(!r.ran);
  CHECK(!r.skipped_reason.empty());
  CHECK(r.ok());
  CHECK_FALSE(r.conclusive);  // inside a checkout, a missing target leaves nothing checked: the gate cannot pass
}

TEST_CASE("merge-base check: an accept entry licenses only the moves it names") {
  // Any added accept entry (even one whose old equals its new) used to license any value, any
  // tolerance increase and any unit or kind change.
  const auto repo = repo_with_baseline("gates_mb_accept_exact");
  auto b = load(repo);
  auto& p50 = b.metrics["ttft/p50"];
  p50.history.push_back({"feature", "2026-12-02T10:00:00Z", 100.0, 100.0, "noise", HistoryAction::accept, ""});
  p50.value = 130;
  p50.tolerance.relative = 0.5;
  b.metrics["ttft/launches"].unit = "launches";
  b.metrics["ttft/launches"].history.push_back(
      {"feature", "2026-12-02T10:00:00Z", 7.0, 7.0, "rename", HistoryAction::accept, ""});
  save(repo, b);
  auto r = check_merge_base(repo / "baselines", "main");
  REQUIRE(r.violations.size() == 3);
  CHECK(r.violations[0].metric == "ttft/launches");
  CHECK(r.violations[0].problem ==
        "unit changed from count to launches without an accept history entry naming that change (`atlas-bench baseline "
        "accept`)");
  CHECK(r.violations[1].problem ==
        "value loosened from 100.0 to 130.0 without an accept history entry from the old value to the new one "
        "(`atlas-bench baseline accept`)");
  CHECK(r.violations[2].problem ==
        "tolerance loosened (relative 0.05, absolute 0.0 -> relative 0.5, absolute 0.0) without an accept history entry "
        "naming that tolerance change");
  // Both entries are listed for the reviewer, licensed or not.
  REQUIRE(r.changes.size() == 2);
  CHECK(r.changes[1] ==
        "baselines/cpu-test/pr.BASELINE.json ttft/p50: accept 100.0 -> 100.0 (feature 2026-12-02T10:00:00Z): \"noise\"");

  // A hand-written "ratchet" entry that loosens is no review either; a chain of accepts that
  // names each step (100 -> 120 -> 130, the tolerance 0.05 -> 0.5) is.
  git(repo, {"checkout", "-q", "--", "."});
  b = load(repo);
  auto& m = b.metrics["ttft/p50"];
  m.history.push_back({"feature", "d", 100.0, 130.0, "ratchet?", HistoryAction::ratchet, ""});
  m.value = 130;
  save(repo, b);
  CHECK_FALSE(check_merge_base(repo / "baselines", "main").ok());
  m.history.pop_back();
  m.history.push_back({"feature", "d", 100.0, 120.0, "first", HistoryAction::accept, ""});
  HistoryEntry second{"feature", "d", 120.0, 130.0, "second", HistoryAction::accept, ""};
  second.tolerance = FieldChange<Tolerance>{{0.05, 0}, {0.5, 0}};
  m.history.push_back(second);
  m.tolerance.relative = 0.5;
  save(repo, b);
  r = check_merge_base(repo / "baselines", "main");
  CHECK(r.ok());
  REQUIRE(r.changes.size() == 2);
  CHECK(r.changes[1].find("accept 120.0 -> 130.0, tolerance relative 0.05, absolute 0.0 -> relative 0.5, absolute 0.0") !=
        std::string::npos);
}

TEST_CASE("merge-base check: baseline accept names the tolerance it adopts, and that entry licenses it") {
  const auto repo = repo_with_baseline("gates_mb_accept_tolerance");
  auto b = load(repo);
  GateConfig cfg = test::test_config();
  cfg.timed_tolerance = {0.2, 0};  // the config now gives timed metrics 20 %
  accept(b, "ttft/p50", test::record_with("ttft", "p50", test::metric(test::spread(120, 2, 6))), "slower", cfg, kStamp);
  const auto& h = b.metrics["ttft/p50"].history.back();
  REQUIRE(h.tolerance.has_value());
  CHECK(h.tolerance->from.relative == 0.05);
  CHECK(h.tolerance->to.relative == 0.2);
  save(repo, b);
  // The entry round-trips through the file, and the check licenses exactly that move.
  CHECK(load(repo).metrics["ttft/p50"].history.back().tolerance->to.relative == 0.2);
  CHECK(check_merge_base(repo / "baselines", "main").ok());
  b = load(repo);
  b.metrics["ttft/p50"].tolerance.relative = 0.3;  // beyond what the entry names
  save(repo, b);
  CHECK_FALSE(check_merge_base(repo / "baselines", "main").ok());
}

TEST_CASE("merge-base check: a hash value moves only with an accept; a suite identity only with an accept of its metrics") {
  const auto repo = test::scratch_dir("gates_mb_hash");
  git(repo, {"init", "-q"});
  auto b = test::baseline_with("ttft/output_fnv1a32",
                               test::baseline_metric(1000, {1000}, records::MetricKind::counted, records::Better::lower,
                                                     {0, 0}, "fnv1a32"));
  b.identity = {{"suites", {{"ttft", {{"lengths", {16, 64}}}}}}};
  save_baseline(baseline_path(repo / "baselines", "cpu-test", "pr"), b);
  git(repo, {"add", "-A"});
  git(repo, {"commit", "-q", "-m", "baseline"});
  git(repo, {"checkout", "-q", "-b", "feature"});
  // A lower fingerprint read as "tightened" (lower is better); and a shrunk suite config in the
  // identity matched a PR that ran less work.
  b.metrics["ttft/output_fnv1a32"].value = 10;
  b.identity["suites"]["ttft"]["lengths"] = {16};
  save_baseline(baseline_path(repo / "baselines", "cpu-test", "pr"), b);
  const auto r = check_merge_base(repo / "baselines", "main");
  REQUIRE(r.violations.size() == 2);
  CHECK(r.violations[0].problem.find("hash value changed from 1000.0 to 10.0") == 0);
  CHECK(r.violations[1].problem ==
        "identity.suites.ttft changed since the merge-base without an accept of one of its metrics");
}

TEST_CASE("merge-base check: a suite pinned since the merge-base is listed beside the verdict, needing no accept") {
  const auto repo = test::scratch_dir("gates_mb_new_pin");
  git(repo, {"init", "-q"});
  auto b = test::baseline_with("ttft/p50", test::baseline_metric(100, {100}));
  b.identity = {{"suites", {{"ttft", {{"lengths", {16, 64}}}}}}};
  save_baseline(baseline_path(repo / "baselines", "cpu-test", "pr"), b);
  git(repo, {"add", "-A"});
  git(repo, {"commit", "-q", "-m", "baseline"});
  git(repo, {"checkout", "-q", "-b", "feature"});
  b.identity["suites"]["agentic"] = {{"traces_sha256", "ab12"}};
  save_baseline(baseline_path(repo / "baselines", "cpu-test", "pr"), b);
  auto r = check_merge_base(repo / "baselines", "main");
  CHECK(r.ok());
  REQUIRE(r.changes.size() == 1);
  CHECK(r.changes[0] == "baselines/cpu-test/pr.BASELINE.json: identity of suite agentic pinned (new since the merge-base)");
  // A merge-base file with no identity at all: each pin is new.
  b.identity = nlohmann::json();
  save_baseline(baseline_path(repo / "baselines", "cpu-test", "pr"), b);
  git(repo, {"commit", "-qam", "no identity"});
  git(repo, {"checkout", "-q", "-b", "feature2"});
  git(repo, {"branch", "-f", "main", "HEAD"});
  b.identity = {{"suites", {{"ttft", {{"lengths", {16}}}}}}};
  save_baseline(baseline_path(repo / "baselines", "cpu-test", "pr"), b);
  r = check_merge_base(repo / "baselines", "main");
  CHECK(r.ok());
  REQUIRE(r.changes.size() == 1);
  CHECK(r.changes[0] == "baselines/cpu-test/pr.BASELINE.json: identity of suite ttft pinned (new since the merge-base)");
}

TEST_CASE("merge-base check: a symlink under the baselines folder is refused, not read as new plus deleted") {
  const auto repo = repo_with_baseline("gates_mb_symlink");
  auto loose = load(repo);
  loose.metrics["ttft/p50"].value = 500;
  const auto elsewhere = repo / "elsewhere.json";
  save_baseline(elsewhere, loose);
  const auto file = baseline_path(repo / "baselines", "cpu-test", "pr");
  std::filesystem::remove(file);
  std::filesystem::create_symlink(elsewhere, file);
  const auto r = check_merge_base(repo / "baselines", "main");
  REQUIRE(r.violations.size() == 1);
  CHECK(r.violations[0].file == "baselines/cpu-test/pr.BASELINE.json");
  CHECK(r.violations[0].problem.find("a symlink under the baselines folder (refused") == 0);
  CHECK(r.notes.empty());  // not "deleted (its gate no longer runs)"
  CHECK_THROWS_WITH_AS(load_baseline(file), doctest::Contains("is a symlink (refused"), GateError);
}

TEST_CASE("merge-base check: a judged BASELINE outside the checkout is checked against the committed one") {
  // `--baselines-dir` added through the Makefile's GATE_ARGS: a loosened copy elsewhere passed.
  const auto repo = repo_with_baseline("gates_mb_outside");
  auto loose = load(repo);
  loose.metrics["ttft/p50"].value = 500;
  const auto outside = std::filesystem::temp_directory_path() / "atlas-gates-mb-outside";
  std::filesystem::remove_all(outside);
  const auto file = baseline_path(outside, "cpu-test", "pr");
  save_baseline(file, loose);
  const JudgedBaseline judged{file, "baselines/cpu-test/pr.BASELINE.json"};
  const auto mb = find_merge_base(repo, choose_target("main", ""));
  const auto r = check_merge_base(mb, outside, &judged);
  std::filesystem::remove_all(outside);
  REQUIRE(r.violations.size() == 1);
  CHECK(r.violations[0].file == file.string() + " (judged in place of baselines/cpu-test/pr.BASELINE.json)");
  CHECK(r.violations[0].problem.find("value loosened from 100.0 to 500.0") == 0);
  CHECK(r.judged_file_at_merge_base);
}

TEST_CASE("merge-base check: a shallow clone or a missing target fails closed; outside git it is only skipped") {
  const auto repo = repo_with_baseline("gates_mb_shallow");
  git(repo, {"commit", "-q", "--allow-empty", "-m", "feature work"});
  const auto clone = test::scratch_dir("gates_mb_shallow_clone");
  git(clone, {"clone", "-q", "--depth", "1", "--branch", "feature", "file://" + repo.string(), "c"});
  const auto r = check_merge_base(clone / "c" / "baselines", "");
  CHECK_FALSE(r.ran);
  CHECK_FALSE(r.conclusive);
  CHECK(r.skipped_reason.find("this is a shallow checkout") != std::string::npos);

  const auto outside = std::filesystem::temp_directory_path() / "atlas-gates-mb-nogit";
  std::filesystem::create_directories(outside / "baselines");
  const auto none = check_merge_base(outside / "baselines", "");
  const auto asked = check_merge_base(outside / "baselines", "main");  // a target named, nothing to compare
  std::filesystem::remove_all(outside);
  CHECK_FALSE(none.ran);
  CHECK(none.conclusive);
  CHECK_FALSE(asked.ran);
  CHECK_FALSE(asked.conclusive);
}

TEST_CASE("target ref: the command line, then the CI's variables, then the reviewed config, then origin/main") {
  auto env = [](std::string var, std::string value) {
    return [=](const char* name) { return var == name ? value : std::string(); };
  };
  const auto none = env("", "");
  CHECK(choose_target("release", "x", env("GITHUB_BASE_REF", "main")).candidates == std::vector<std::string>{"release"});
  const auto gh = choose_target("", "", env("GITHUB_BASE_REF", "develop"));
  CHECK(gh.candidates == std::vector<std::string>{"origin/develop", "develop"});
  CHECK(gh.source == "GITHUB_BASE_REF");
  CHECK(choose_target("", "", env("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main")).candidates ==
        std::vector<std::string>{"origin/main", "main"});
  CHECK(choose_target("", "stable", none).candidates == std::vector<std::string>{"stable"});
  CHECK(choose_target("", "", none).candidates == std::vector<std::string>{"origin/main", "main"});
}
