#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gates/merge_base_check.hpp"
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
}
