#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <string>

#include "common/atomic_file.hpp"
#include "records/error.hpp"
#include "records/provenance.hpp"
#include "records/record_io.hpp"
#include "records/store.hpp"
#include "tests/records/fixture.hpp"
#include "tests/test_data.hpp"
#include "tests/skip.hpp"

namespace fs = std::filesystem;
using atlas::records::RecordError;

TEST_CASE("store layout: <machine-class>/<commit>[-dirty]/<gate>-<UTC>.json") {
  auto r = atlas::test::sample_record();
  CHECK(atlas::records::record_relative_path(r) ==
        fs::path("cpu-2c-x86_64/3f9a0c12b4de5f60718293a4b5c6d7e8f9012345/pr-20261129T143320Z.json"));
  r.git.dirty = true;
  r.gate_or_suite = "decode-anatomy";
  CHECK(atlas::records::record_relative_path(r) ==
        fs::path("cpu-2c-x86_64/3f9a0c12b4de5f60718293a4b5c6d7e8f9012345-dirty/decode-anatomy-20261129T143320Z.json"));
  r.machine.machine_class = "../etc";
  CHECK_THROWS_WITH_AS(atlas::records::record_relative_path(r), doctest::Contains("machine.machine_class"), RecordError);
  r = atlas::test::sample_record();
  r.start_utc = "yesterday";
  CHECK_THROWS_WITH_AS(atlas::records::record_relative_path(r), doctest::Contains("\"yesterday\""), RecordError);
}

TEST_CASE("write_to_store never overwrites and lists oldest first") {
  const auto store = atlas::test::scratch_dir("store_write");
  auto r = atlas::test::sample_record();
  const auto p1 = atlas::records::write_to_store(r, store);
  CHECK(p1 == store / "cpu-2c-x86_64/3f9a0c12b4de5f60718293a4b5c6d7e8f9012345/pr-20261129T143320Z.json");
  r.run_id = "second";
  const auto p2 = atlas::records::write_to_store(r, store);  // same second: gets a suffix
  CHECK(p2.filename() == "pr-20261129T143320Z-2.json");
  CHECK(atlas::records::read_record(p1).run_id == "20261129T143320Z-0123456789ab");
  CHECK(atlas::records::read_record(p2).run_id == "second");
  r.start_utc = "2026-11-28T09:00:00Z";
  const auto p0 = atlas::records::write_to_store(r, store);
  atlas::write_file_atomic(store / "cpu-2c-x86_64" / "notes.txt", "not a record");
  atlas::write_file_atomic(p1.parent_path() / "README", "not a record");
  const auto all = atlas::records::list_records(store);
  REQUIRE(all.size() == 3);
  CHECK(all[0].path == p0);
  CHECK(all[1].path == p1);
  CHECK(all[2].path == p2);
  CHECK(all[0].gate_or_suite == "pr");
  CHECK(all[0].utc == "20261128T090000Z");
  CHECK(all[0].commit == "3f9a0c12b4de5f60718293a4b5c6d7e8f9012345");
  CHECK_FALSE(all[0].dirty);
  CHECK(atlas::records::list_records(store / "nowhere").empty());
}

TEST_CASE("resolve_record: file path, commit prefix, newest, ambiguity") {
  const auto store = atlas::test::scratch_dir("store_resolve");
  auto a1 = atlas::test::sample_record("aaaa111100000000000000000000000000000000", "2026-11-29T10:00:00Z");
  auto a2 = atlas::test::sample_record("aaaa111100000000000000000000000000000000", "2026-11-29T11:00:00Z");
  auto a3 = atlas::test::sample_record("aaaa222200000000000000000000000000000000", "2026-11-29T12:00:00Z");
  auto b = atlas::test::sample_record("bbbb000000000000000000000000000000000000", "2026-11-29T09:00:00Z");
  b.gate_or_suite = "nightly";
  const auto pa1 = atlas::records::write_to_store(a1, store);
  const auto pa2 = atlas::records::write_to_store(a2, store);
  const auto pa3 = atlas::records::write_to_store(a3, store);
  const auto pb = atlas::records::write_to_store(b, store);
  CHECK(atlas::records::resolve_record(pa1.string(), store) == pa1);
  CHECK(atlas::records::resolve_record("aaaa1111", store) == pa2);
  CHECK(atlas::records::resolve_record("aaaa2", store) == pa3);
  CHECK(atlas::records::resolve_record("bbbb", store) == pb);
  CHECK(atlas::records::resolve_record("bbbb", store, "nightly") == pb);
  CHECK_THROWS_AS(atlas::records::resolve_record("bbbb", store, "pr"), RecordError);
  try {
    atlas::records::resolve_record("aaaa", store);
    FAIL("ambiguous prefix accepted");
  } catch (const RecordError& e) {
    const std::string m = e.what();
    CHECK(m.find("ambiguous") != std::string::npos);
    CHECK(m.find("aaaa111100000000000000000000000000000000") != std::string::npos);
    CHECK(m.find("aaaa222200000000000000000000000000000000") != std::string::npos);
  }
  CHECK_THROWS_WITH_AS(atlas::records::resolve_record("cccc", store), doctest::Contains("no record matches \"cccc\""),
                       RecordError);
  // A dirty run of the same commit is newer, but it ran other code than the commit: only
  // "<sha>-dirty" picks it; the bare prefix or sha names the clean records (it used to pick
  // the newest of either, so a commit resolved to a run with uncommitted changes).
  auto d = a2;
  d.git.dirty = true;
  d.start_utc = "2026-11-29T13:00:00Z";
  const auto pd = atlas::records::write_to_store(d, store);
  CHECK(atlas::records::resolve_record("aaaa1111", store) == pa2);
  CHECK(atlas::records::resolve_record("aaaa111100000000000000000000000000000000", store) == pa2);
  CHECK(atlas::records::resolve_record("aaaa111100000000000000000000000000000000-dirty", store) == pd);
  CHECK(atlas::records::commit_records("aaaa1111", store, "", std::nullopt, /*allow_dirty=*/true).front().path == pd);
  // A commit with only dirty records: refused, naming them and how to ask for one.
  auto only_dirty = a1;
  only_dirty.git.commit = "dddd000000000000000000000000000000000000";
  only_dirty.git.dirty = true;
  const auto pod = atlas::records::write_to_store(only_dirty, store);
  try {
    atlas::records::resolve_record("dddd", store);
    FAIL("a dirty record stood in for a clean commit name");
  } catch (const RecordError& e) {
    const std::string m = e.what();
    CHECK(m.find("only records taken with uncommitted changes") != std::string::npos);
    CHECK(m.find("dddd000000000000000000000000000000000000-dirty") != std::string::npos);
    CHECK(m.find(pod.string()) != std::string::npos);
  }
  CHECK(atlas::records::resolve_record("dddd000000000000000000000000000000000000-dirty", store) == pod);
}

TEST_CASE("resolve_record: a commit's newest valid record wins over newer invalid ones") {
  const auto store = atlas::test::scratch_dir("store_resolve_valid");
  auto good = atlas::test::sample_record("eeee000000000000000000000000000000000000", "2026-11-29T10:00:00Z");
  auto bad = atlas::test::sample_record("eeee000000000000000000000000000000000000", "2026-11-29T11:00:00Z");
  bad.valid = false;
  bad.invalid_reason = "suite ttft: stopped";
  const auto pgood = atlas::records::write_to_store(good, store);
  const auto pbad = atlas::records::write_to_store(bad, store);
  CHECK(atlas::records::resolve_record("eeee", store) == pgood);
  CHECK(atlas::records::resolve_record(pbad.string(), store) == pbad);  // a file path is taken as given
  // Only invalid records: the newest of them (diff then says INVALID).
  auto bad2 = bad;
  bad2.git.commit = "ffff000000000000000000000000000000000000";
  const auto pbad2 = atlas::records::write_to_store(bad2, store);
  CHECK(atlas::records::resolve_record("ffff", store) == pbad2);
}

TEST_CASE("resolve_record falls back to git rev-parse for symbolic names") {
  const auto sha = atlas::records::git_rev_parse(atlas::test::source_dir(), "HEAD");
  if (!sha) {
    ATLAS_SKIP("the source tree is not a git checkout here");
  }
  const auto store = atlas::test::scratch_dir("store_revparse");
  const auto p = atlas::records::write_to_store(atlas::test::sample_record(*sha), store);
  CHECK(atlas::records::resolve_record("HEAD", store, "", atlas::test::source_dir()) == p);
}

TEST_CASE("provenance: git, build, machine, times, run ids") {
  const auto g = atlas::records::collect_git(atlas::test::source_dir());
  if (g.commit != "unknown") {
    CHECK(std::regex_match(g.commit, std::regex("[0-9a-f]{40}")));
    CHECK(g.dirty == !g.diff_sha256.empty());
  }
  // Outside any checkout: "unknown", clean.
  const auto root = atlas::records::collect_git("/");
  CHECK(root.commit == "unknown");
  CHECK_FALSE(root.dirty);

  const auto b = atlas::records::build_info();
  CHECK_FALSE(b.compiler.empty());
  CHECK_FALSE(b.build_type.empty());

  const auto m = atlas::records::collect_machine();
  CHECK(m.cores > 0);
  CHECK(m.memory_bytes > 0);
  CHECK(std::regex_match(m.machine_class, std::regex("cpu-[0-9]+c-.+")));
  CHECK(m.gpu_name.empty());

  using namespace std::chrono;
  const sys_seconds t = sys_days{year{2026} / 11 / 29} + hours{14} + minutes{33} + seconds{20};
  CHECK(atlas::records::utc_iso(t) == "2026-11-29T14:33:20Z");
  CHECK(atlas::records::utc_compact(t) == "20261129T143320Z");
  CHECK(atlas::records::compact_utc("2026-11-29T14:33:20Z") == "20261129T143320Z");
  const auto id1 = atlas::records::new_run_id();
  const auto id2 = atlas::records::new_run_id();
  CHECK(std::regex_match(id1, std::regex("[0-9]{8}T[0-9]{6}Z-[0-9a-f]{12}")));
  CHECK(id1 != id2);
}

TEST_CASE("collect_git: a tree inside another repository that does not track it is not that repository's commit") {
  const auto root = atlas::test::scratch_dir("git_enclosing");
  auto sh = [&](const std::string& cmd) {
    return std::system(("cd '" + root.string() + "' && " + cmd + " >/dev/null 2>&1").c_str());
  };
  REQUIRE(sh("git init -q . && git -c user.email=t@t -c user.name=t commit -q --allow-empty -m init") == 0);
  fs::create_directories(root / "unpacked" / "atlas-bench");
  atlas::write_file_atomic(root / "unpacked" / "atlas-bench" / "CMakeLists.txt", "project(x)\n");
  CHECK(atlas::records::collect_git(root / "unpacked" / "atlas-bench").commit == "unknown");
  // A tracked subdirectory of a checkout is that checkout.
  REQUIRE(sh("git add unpacked && git -c user.email=t@t -c user.name=t commit -q -m add") == 0);
  const auto g = atlas::records::collect_git(root / "unpacked" / "atlas-bench");
  CHECK(g.commit.size() == 40);
  CHECK(atlas::records::collect_git(root).commit == g.commit);
}

TEST_CASE("resolve_record skips a record claiming a future start or another commit than its folder") {
  const auto store = atlas::test::scratch_dir("store_resolve_provenance");
  const std::string c = "cccc000000000000000000000000000000000000";
  const auto real = atlas::records::write_to_store(atlas::test::sample_record(c, "2026-11-29T10:00:00Z"), store);
  const auto future = atlas::records::write_to_store(atlas::test::sample_record(c, "2999-01-01T00:00:00Z"), store);
  CHECK(atlas::records::resolve_record("cccc", store) == real);  // not the "newest", year 2999
  std::filesystem::remove(real);
  CHECK_THROWS_WITH_AS(atlas::records::resolve_record("cccc", store), doctest::Contains("can stand for its commit"),
                       RecordError);
  CHECK(atlas::records::provenance_problem(atlas::records::read_record(future), atlas::records::list_records(store).at(0)) ==
        "refused: its start_utc 2999-01-01T00:00:00Z is in the future");
}
