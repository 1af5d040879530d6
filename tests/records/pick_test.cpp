// Which records a diff reads (records/pick.hpp): like compared with like, or a refusal listing
// what is there; never a dirty record for a clean commit unless asked; a sentence per side.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "common/atomic_file.hpp"
#include "records/error.hpp"
#include "records/pick.hpp"
#include "records/record_io.hpp"
#include "records/store.hpp"
#include "tests/gates/git_repo.hpp"
#include "tests/records/fixture.hpp"
#include "tests/test_data.hpp"

namespace fs = std::filesystem;
using atlas::records::RecordError;

namespace {

const std::string kA = "aaaa000000000000000000000000000000000000";
const std::string kB = "bbbb000000000000000000000000000000000000";

atlas::records::Record gate_record(const std::string& commit, const char* time) {
  auto r = atlas::test::sample_record(commit, time);
  r.config["target_name"] = "engine:cpu";
  r.verdicts = {{"overall", "pass"}};
  return r;
}

}  // namespace

TEST_CASE("comparable names the first difference, or nothing") {
  const auto a = gate_record(kA, "2026-11-29T10:00:00Z");
  CHECK(atlas::records::comparable(a, a).empty());
  auto b = a;
  b.machine.machine_class = "h200";
  CHECK(atlas::records::comparable(a, b) == "machine class cpu-2c-x86_64 vs h200");
  b = a;
  b.gate_or_suite = "nightly";
  CHECK(atlas::records::comparable(a, b) == "gate or suite pr vs nightly");
  b = a;
  b.verdicts = nullptr;  // `run --config pr`: same gate_or_suite, but a suite run, not a gate
  CHECK(atlas::records::comparable(a, b) == "made by gate vs run");
  b = a;
  b.merged_from = {"x", "y"};
  CHECK(atlas::records::comparable(a, b) == "made by gate vs merged");
  b = a;
  b.model.sha256 = "ffff";
  b.model.path = "preset:qwen3-next-tiny@17";
  CHECK(atlas::records::comparable(a, b).rfind("model models/stories260K/stories260K.bin (sha256 b0a507e7ad0f) vs "
                                               "preset:qwen3-next-tiny@17",
                                               0) == 0);
  b = a;
  b.suites["ttft"].config["repetitions"] = 9;
  CHECK(atlas::records::comparable(a, b).rfind("suite ttft config ", 0) == 0);
  b = a;
  b.config["target_name"] = "engine:cuda";
  CHECK(atlas::records::comparable(a, b) == "target engine:cpu vs engine:cuda");
  // Another suite beside the common one is fine (a suite added between the commits: "added").
  b = a;
  b.suites["bfcl"] = b.suites["ttft"];
  b.suites["bfcl"].name = "bfcl";
  CHECK(atlas::records::comparable(a, b).empty());
}

TEST_CASE("pick_pair: a commit's newer record of another kind is passed over, and the sentence says so") {
  const auto store = atlas::test::scratch_dir("pick_kind");
  const auto pa = atlas::records::write_to_store(gate_record(kA, "2026-11-29T10:00:00Z"), store);
  // Newer records of A that must not stand in for it: a merged nightly, a run on another
  // machine class, a suite run of the pr config, a dirty gate run.
  auto nightly = gate_record(kA, "2026-11-29T10:01:00Z");
  nightly.gate_or_suite = "nightly";
  nightly.merged_from = {"s0", "s1"};
  nightly.verdicts = nullptr;
  atlas::records::write_to_store(nightly, store);
  auto other_class = gate_record(kA, "2026-11-29T10:02:00Z");
  other_class.machine.machine_class = "cpu-4c-x86_64";
  atlas::records::write_to_store(other_class, store);
  auto run = gate_record(kA, "2026-11-29T10:03:00Z");
  run.verdicts = nullptr;
  atlas::records::write_to_store(run, store);
  auto dirty = gate_record(kA, "2026-11-29T10:04:00Z");
  dirty.git.dirty = true;
  const auto pdirty = atlas::records::write_to_store(dirty, store);
  const auto pb = atlas::records::write_to_store(gate_record(kB, "2026-11-29T11:00:00Z"), store);

  const auto p = atlas::records::pick_pair("aaaa", "bbbb", store, {});
  CHECK(p.a.path == pa);
  CHECK(p.b.path == pb);
  INFO(p.a.why);
  CHECK(p.a.why.rfind("pr, engine:cpu, no test hooks, gate, cpu-2c-x86_64, models/stories260K/stories260K.bin", 0) == 0);
  CHECK(p.a.why.find("of commit aaaa's 4 record(s), 1 comparable") != std::string::npos);
  CHECK(p.a.why.find("(gate or suite nightly vs pr)") != std::string::npos);
  CHECK(p.a.why.find("(machine class cpu-4c-x86_64 vs cpu-2c-x86_64)") != std::string::npos);
  CHECK(p.a.why.find("(made by run vs gate)") != std::string::npos);
  CHECK(p.a.why.find("dirty") == std::string::npos);  // not even a candidate for a clean name
  CHECK(p.b.why.find("the only one") != std::string::npos);

  // Asked for: --allow-dirty makes it a candidate, and the clean record still wins.
  atlas::records::PickOptions allow;
  allow.allow_dirty = true;
  const auto q = atlas::records::pick_pair("aaaa", "bbbb", store, allow);
  CHECK(q.a.path == pa);
  CHECK(q.a.why.find(pdirty.filename().string() + " (dirty)") != std::string::npos);
  // Named: "<sha>-dirty" picks it.
  CHECK(atlas::records::pick_pair(kA + "-dirty", "bbbb", store, {}).a.path == pdirty);
}

TEST_CASE("pick_pair refuses unlike records, listing each with how it differs") {
  const auto store = atlas::test::scratch_dir("pick_refuse");
  auto nightly = gate_record(kA, "2026-11-29T10:00:00Z");
  nightly.gate_or_suite = "nightly";
  nightly.merged_from = {"s0", "s1"};
  const auto pn = atlas::records::write_to_store(nightly, store);
  auto other = gate_record(kA, "2026-11-29T10:01:00Z");
  other.machine.machine_class = "h200";
  const auto po = atlas::records::write_to_store(other, store);
  const auto pb = atlas::records::write_to_store(gate_record(kB, "2026-11-29T11:00:00Z"), store);
  try {
    atlas::records::pick_pair("aaaa", "bbbb", store, {});
    FAIL("a pr gate record was compared with a merged nightly or another machine class");
  } catch (const RecordError& e) {
    const std::string m = e.what();
    INFO(m);
    CHECK(m.find("no record of \"aaaa\" can be compared with any record of \"bbbb\"") != std::string::npos);
    CHECK(m.find(pb.string()) != std::string::npos);
    CHECK(m.find(pn.string() + ": nightly, engine:cpu, merged, no test hooks") != std::string::npos);
    CHECK(m.find("differs: gate or suite nightly vs pr") != std::string::npos);
    CHECK(m.find(po.string()) != std::string::npos);
    CHECK(m.find("differs: machine class h200 vs cpu-2c-x86_64") != std::string::npos);
    CHECK(m.find("pass two record files") != std::string::npos);
  }
  // A file against a commit: the commit side is matched to the file, and refused the same way.
  CHECK_THROWS_WITH_AS(atlas::records::pick_pair(pb.string(), "aaaa", store, {}),
                       doctest::Contains("no record of \"aaaa\" can be compared with A"), RecordError);
  // Two files are taken as given (the diff warns when they are unlike).
  const auto files = atlas::records::pick_pair(pn.string(), pb.string(), store, {});
  CHECK(files.a.path == pn);
  CHECK(files.a.why.rfind("the file given (nightly, ", 0) == 0);
}

TEST_CASE("pick_pair with two commits: B's newest record without a partner on A gives way to one with") {
  const auto store = atlas::test::scratch_dir("pick_pair_b");
  const auto pa = atlas::records::write_to_store(gate_record(kA, "2026-11-29T10:00:00Z"), store);
  const auto pb_gate = atlas::records::write_to_store(gate_record(kB, "2026-11-29T11:00:00Z"), store);
  auto b_run = gate_record(kB, "2026-11-29T12:00:00Z");  // newer, but A has no suite run
  b_run.verdicts = nullptr;
  atlas::records::write_to_store(b_run, store);
  const auto p = atlas::records::pick_pair("aaaa", "bbbb", store, {});
  CHECK(p.a.path == pa);
  CHECK(p.b.path == pb_gate);
  CHECK(p.b.why.find("(made by run vs gate)") != std::string::npos);
}

TEST_CASE("pick_record prefers the baseline's gate and is the same pick every time") {
  const auto store = atlas::test::scratch_dir("pick_record_gate");
  const auto pgate = atlas::records::write_to_store(gate_record(kA, "2026-11-29T10:00:00Z"), store);
  auto ttft = gate_record(kA, "2026-11-29T10:05:00Z");
  ttft.gate_or_suite = "ttft";
  ttft.verdicts = nullptr;
  const auto pttft = atlas::records::write_to_store(ttft, store);
  const auto one = atlas::records::pick_record("aaaa", store, {}, "pr");
  CHECK(one.path == pgate);
  CHECK(one.why.find(pttft.filename().string() + " (not gate pr)") != std::string::npos);
  CHECK(atlas::records::pick_record("aaaa", store, {}, "pr").path == one.path);
  // Without a preference the newest wins.
  CHECK(atlas::records::pick_record("aaaa", store, {}).path == pttft);
}

TEST_CASE("pick_record refuses a record whose commit disagrees with its folder, or whose start time is in the future") {
  // Records committed under .benchmarks/ by a pull request: a year-2999 timestamp became the
  // "newest" base side of `diff <commit>` and of `baseline ratchet --record <commit>`.
  const auto store = atlas::test::scratch_dir("pick_record_provenance");
  const auto real = atlas::records::write_to_store(gate_record(kA, "2026-11-29T10:00:00Z"), store);
  const auto future = atlas::records::write_to_store(gate_record(kA, "2999-01-01T00:00:00Z"), store);
  auto other = gate_record(kA, "2026-11-29T11:00:00Z");
  const auto moved = atlas::records::write_to_store(other, store);
  other.git.commit = kB;  // the file says commit B but sits in A's folder
  atlas::write_file_atomic(moved, atlas::records::record_text(other));
  const auto picked = atlas::records::pick_record("aaaa", store, {}, "pr");
  INFO(picked.why);
  CHECK(picked.path == real);
  CHECK(picked.why.find(future.filename().string() + " (refused: its start_utc 2999-01-01T00:00:00Z is in the future)") !=
        std::string::npos);
  CHECK(picked.why.find(moved.filename().string() + " (refused: its git.commit " + kB + " disagrees with its folder " + kA +
                        ")") != std::string::npos);
}

TEST_CASE("pick_record refuses a record committed into an ignored store, and one whose path disagrees with its contents") {
  // A pull request can commit a record with a plausible stamp under .benchmarks/ (git add -f);
  // it ranked by that stamp and became the "newest" base side of diff and ratchet.
  const auto repo = atlas::test::scratch_dir("pick_record_committed");
  atlas::test::git(repo, {"init", "-q"});
  atlas::write_file_atomic(repo / ".gitignore", "/.benchmarks/\n");
  const auto store = repo / ".benchmarks";
  const auto real = atlas::records::write_to_store(gate_record(kA, "2026-11-29T10:00:00Z"), store);
  const auto committed = atlas::records::write_to_store(gate_record(kA, "2026-11-29T12:00:00Z"), store);
  atlas::test::git(repo, {"add", ".gitignore"});
  atlas::test::git(repo, {"add", "-f", fs::relative(committed, repo).string()});
  atlas::test::git(repo, {"commit", "-q", "-m", "a record brought by a commit"});
  // A real record renamed to a newer stamp, and one moved into another machine's folder.
  const auto older = atlas::records::write_to_store(gate_record(kA, "2026-11-29T09:00:00Z"), store);
  const auto renamed = older.parent_path() / "pr-20261129T130000Z.json";
  fs::rename(older, renamed);
  auto h200 = gate_record(kA, "2026-11-29T14:00:00Z");
  h200.machine.machine_class = "h200";
  const auto moved = atlas::records::write_to_store(h200, store);
  atlas::write_file_atomic(moved, atlas::records::record_text(gate_record(kA, "2026-11-29T14:00:00Z")));
  const auto named = atlas::records::write_to_store(gate_record(kA, "2026-11-29T15:00:00Z"), store);
  auto suite = gate_record(kA, "2026-11-29T15:00:00Z");
  suite.gate_or_suite = "ttft";
  atlas::write_file_atomic(named, atlas::records::record_text(suite));

  const auto picked = atlas::records::pick_record("aaaa", store, {});
  INFO(picked.why);
  CHECK(picked.path == real);
  CHECK(picked.why.find(committed.filename().string() +
                        " (refused: committed into the checkout although its ignore rules exclude the store") !=
        std::string::npos);
  CHECK(picked.why.find(renamed.filename().string() +
                        " (refused: its start_utc 2026-11-29T09:00:00Z disagrees with its file name's stamp "
                        "20261129T130000Z)") != std::string::npos);
  CHECK(picked.why.find(moved.filename().string() +
                        " (refused: its machine.machine_class cpu-2c-x86_64 disagrees with its folder h200)") !=
        std::string::npos);
  CHECK(picked.why.find(named.filename().string() + " (refused: its gate_or_suite ttft disagrees with its file name's pr)") !=
        std::string::npos);
  // The same record tracked where the store is not ignored (a records branch checkout) stands.
  atlas::test::git(repo, {"rm", "-q", "--cached", ".gitignore"});
  atlas::test::git(repo, {"commit", "-q", "-m", "the store is this branch's content"});
  fs::remove(repo / ".gitignore");
  CHECK(atlas::records::pick_record("aaaa", store, {}).path == committed);
}
