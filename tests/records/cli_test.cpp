// End-to-end checks of the records commands through the atlas-bench binary.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "records/record_io.hpp"
#include "records/store.hpp"
#include "tests/built_exe.hpp"
#include "tests/records/fixture.hpp"
#include "tests/run_process.hpp"
#include "tests/test_data.hpp"
#include "tests/skip.hpp"

namespace fs = std::filesystem;

namespace {

// After have_exe(): the atlas-bench ctest names (tests/built_exe.hpp).
fs::path exe() { return atlas::test::find_built_exe("ATLAS_BENCH_EXE").path; }

using Run = atlas::test::ShellResult;

Run run(const std::string& args) {
  std::string cmd = "'";  // appends: GCC 12's false -Wrestrict on "'" + std::string&& (PR 105329)
  cmd += exe().string();
  cmd += "' ";
  cmd += args;
  cmd += " 2>&1";
  return atlas::test::run_shell(cmd);
}

bool have_exe() { return !atlas::test::bench_exe_or_skip().empty(); }

}  // namespace

TEST_CASE("atlas-bench diff resolves commit prefixes and prints every format") {
  if (!have_exe()) return;
  const auto store = atlas::test::scratch_dir("cli_diff");
  auto a = atlas::test::sample_record("aaaa000000000000000000000000000000000000");
  auto b = atlas::test::sample_record("bbbb000000000000000000000000000000000000");
  b.suites["ttft"].metrics["launches_per_token"].samples = {44, 44, 44};
  const auto pa = atlas::records::write_to_store(a, store);
  atlas::records::write_to_store(b, store);

  auto r = run("diff aaaa bbbb --benchmarks-dir '" + store.string() + "' --format json");
  CHECK(r.rc == 1);  // a printed regression exits 1 (README exit-code table)
  // stderr (merged here) first says which record each side is: "A: <path>: pr, ...".
  CHECK(r.out.rfind("A: ", 0) == 0);
  const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  CHECK(j["a"]["label"] == pa.string());
  CHECK(j["metrics"][0]["metric"] == "launches_per_token");
  CHECK(j["metrics"][0]["change"] == "regressed");

  r = run("diff '" + pa.string() + "' bbbb --benchmarks-dir '" + store.string() + "'");
  CHECK(r.rc == 1);
  CHECK(r.out.find("launches_per_token  count     42     44  +4.76%") != std::string::npos);
  r = run("diff aaaa bbbb --format md --benchmarks-dir '" + store.string() + "'");
  CHECK(r.rc == 1);
  CHECK(r.out.find("| **regressed** |") != std::string::npos);
  // The spellings other commands use: --store for the store, markdown for md.
  const Run same = run("diff aaaa bbbb --format markdown --store '" + store.string() + "'");
  CHECK(same.rc == 1);
  CHECK(same.out == r.out);
  // No regression: exit 0.
  r = run("diff bbbb bbbb --benchmarks-dir '" + store.string() + "'");
  CHECK(r.rc == 0);

  r = run("diff aaaa cccc --benchmarks-dir '" + store.string() + "'");
  CHECK(r.rc == 3);
  CHECK(r.out.find("no record matches \"cccc\"") != std::string::npos);
  r = run("diff aaaa bbbb --format csv --benchmarks-dir '" + store.string() + "'");
  CHECK(r.rc == 3);
}

TEST_CASE("atlas-bench diff picks a record of the same kind and says which; records list shows kind, target, hooks") {
  if (!have_exe()) return;
  const auto store = atlas::test::scratch_dir("cli_diff_pick");
  const std::string c1 = "eeee000000000000000000000000000000000000", c2 = "ffff000000000000000000000000000000000000";
  // A sample record of `commit` at `time` for `target`, with run id `id`.
  auto record = [](const std::string& commit, const char* time, const char* target, const char* id) {
    auto rec = atlas::test::sample_record(commit, time);
    rec.config["target_name"] = target;
    rec.run_id = id;
    return rec;
  };
  atlas::records::write_to_store(record(c1, "2026-11-29T10:00:00Z", "engine:cpu", "base"), store);
  // Newer records of the same commit that must not be picked: a planted-slowdown run, a
  // nightly shard, another target.
  auto hooked = record(c1, "2026-11-29T10:01:00Z", "engine:cpu", "hooked");
  hooked.config["target"] = {{"options", {{"backend", {{"inject_decode_delay_us", 300}}}}}};
  atlas::records::write_to_store(hooked, store);
  atlas::records::write_to_store(record(c1, "2026-11-29T10:02:00Z", "engine:cuda", "cuda"), store);
  auto shard = record(c1, "2026-11-29T10:03:00Z", "engine:cpu", "shard");
  shard.verdicts = {{"shard", {{"index", 1}, {"count", 3}}}};
  atlas::records::write_to_store(shard, store);
  atlas::records::write_to_store(record(c2, "2026-11-29T11:00:00Z", "engine:cpu", "cand"), store);

  auto r = run("diff eeee ffff --benchmarks-dir '" + store.string() + "' --format json 2>&1");
  CHECK(r.rc == 0);
  CHECK(r.out.find("A: ") != std::string::npos);
  CHECK(r.out.find("eeee000000000000000000000000000000000000/pr-20261129T100000Z.json: pr, engine:cpu, no test hooks") !=
        std::string::npos);
  CHECK(r.out.find("of commit eeee's 4 record(s), 2 comparable") != std::string::npos);
  CHECK(r.out.find("(test hooks inject_decode_delay_us=300)") != std::string::npos);
  CHECK(r.out.find("(target engine:cuda vs engine:cpu)") != std::string::npos);
  CHECK(r.out.find("(made by nightly shard 1/3 vs run)") != std::string::npos);

  r = run("records list --benchmarks-dir '" + store.string() + "' --format json");
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.size() == 5);
  CHECK(j[1]["test_hooks"] == nlohmann::json::array({"inject_decode_delay_us=300"}));
  CHECK(j[2]["target"] == "engine:cuda");
  CHECK(j[3]["kind"] == "pr shard 1/3");
  r = run("records list --benchmarks-dir '" + store.string() + "'");
  CHECK(r.out.find("inject_decode_delay_us=300") != std::string::npos);
}

TEST_CASE("atlas-bench diff: undecided rows exit 2, unlike commits are refused with exit 3, a dirty run needs asking") {
  if (!have_exe()) return;
  const auto store = atlas::test::scratch_dir("cli_diff_undecided");
  auto a = atlas::test::sample_record("aaaa000000000000000000000000000000000000");
  auto b = atlas::test::sample_record("bbbb000000000000000000000000000000000000");
  // 3 timed samples a side: below the gate's min_samples, so the gate (and diff) cannot decide.
  a.suites["ttft"].metrics["ttft_ms"].samples = {10, 10.1, 10.2};
  b.suites["ttft"].metrics["ttft_ms"].samples = {20, 20.1, 20.2};
  atlas::records::write_to_store(a, store);
  atlas::records::write_to_store(b, store);
  auto r = run("diff aaaa bbbb --benchmarks-dir '" + store.string() + "'");
  INFO(r.out);
  CHECK(r.rc == 2);
  CHECK(r.out.find("undecided") != std::string::npos);
  CHECK(r.out.find("at least 5 needed") != std::string::npos);
  CHECK(r.out.find("judged by the pr gate's rules") != std::string::npos);

  // Another machine class only: refused, listing what is there.
  auto c = atlas::test::sample_record("cccc000000000000000000000000000000000000");
  c.machine.machine_class = "h200";
  const auto pc = atlas::records::write_to_store(c, store);
  r = run("diff cccc bbbb --benchmarks-dir '" + store.string() + "'");
  CHECK(r.rc == 3);
  CHECK(r.out.find("no record of \"cccc\" can be compared") != std::string::npos);
  CHECK(r.out.find(pc.string()) != std::string::npos);
  CHECK(r.out.find("differs: machine class h200 vs cpu-2c-x86_64") != std::string::npos);

  // Only a dirty record of the commit: refused unless asked (--allow-dirty or <sha>-dirty).
  auto dirty = atlas::test::sample_record("dddd000000000000000000000000000000000000");
  dirty.git.dirty = true;
  atlas::records::write_to_store(dirty, store);
  r = run("diff dddd bbbb --benchmarks-dir '" + store.string() + "'");
  CHECK(r.rc == 3);
  CHECK(r.out.find("only records taken with uncommitted changes") != std::string::npos);
  r = run("diff dddd bbbb --allow-dirty --benchmarks-dir '" + store.string() + "'");
  CHECK(r.rc == 2);
  CHECK(r.out.find("dirty (uncommitted changes)") != std::string::npos);
}

TEST_CASE("atlas-bench records list and merge") {
  if (!have_exe()) return;
  const auto store = atlas::test::scratch_dir("cli_records");
  auto s1 = atlas::test::sample_record("dddd000000000000000000000000000000000000", "2026-11-29T10:00:00Z");
  s1.run_id = "s1";
  auto s2 = atlas::test::sample_record("dddd000000000000000000000000000000000000", "2026-11-29T10:05:00Z");
  s2.run_id = "s2";
  const auto p1 = atlas::records::write_to_store(s1, store);
  const auto p2 = atlas::records::write_to_store(s2, store);

  auto r = run("records list --benchmarks-dir '" + store.string() + "' --format json");
  CHECK(r.rc == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.size() == 2);
  CHECK(j[0]["path"] == p1.string());
  CHECK(j[1]["utc"] == "20261129T100500Z");
  r = run("records list --benchmarks-dir '" + store.string() + "'");
  CHECK(r.out.rfind("utc", 0) == 0);  // header: utc machine_class commit kind target test_hooks path
  CHECK(r.out.find("\n20261129T100000Z  cpu-2c-x86_64         dddd00000000") != std::string::npos);

  const auto out = store / "merged.json";
  r = run("records merge --out '" + out.string() + "' '" + p1.string() + "' '" + p2.string() + "'");
  CHECK(r.rc == 0);
  const auto m = atlas::records::read_record(out);
  CHECK(m.merged_from == std::vector<std::string>{"s1", "s2"});
  CHECK(m.suites.at("ttft").metrics.at("ttft_ms").samples.size() == 10);
  // Never overwrites an existing file.
  r = run("records merge --out '" + out.string() + "' '" + p1.string() + "' '" + p2.string() + "'");
  CHECK(r.rc == 3);
  // Without --out the merged record goes into the store.
  r = run("records merge --benchmarks-dir '" + store.string() + "' '" + p1.string() + "' '" + p2.string() + "'");
  CHECK(r.rc == 0);
  CHECK(r.out.find("dddd000000000000000000000000000000000000/pr-20261129T100000Z-2.json") != std::string::npos);
}

TEST_CASE("atlas-bench data verify exits 0 on good data and 3 naming missing or altered files") {
  if (!have_exe()) return;
  atlas::test::require_data(atlas::test::data_dir() / "models");
  const std::string manifest = (atlas::test::source_dir() / "data" / "manifest.json").string();
  auto r = run("data verify --data-dir '" + atlas::test::data_dir().string() + "' --manifest '" + manifest + "'");
  CHECK(r.rc == 0);
  CHECK(r.out.find("23 assets OK") != std::string::npos);

  const auto dir = atlas::test::scratch_dir("cli_data_verify");
  fs::create_directories(dir / "models/stories260K");
  atlas::write_file_atomic(dir / "models/stories260K/tok512.bin", "not the tokenizer");
  r = run("data verify --data-dir '" + dir.string() + "' --manifest '" + manifest + "'");
  CHECK(r.rc == 3);
  CHECK(r.out.find("models/stories260K/tok512.bin: size 17 bytes, manifest says 6227") != std::string::npos);
  CHECK(r.out.find("models/stories260K/stories260K.bin: missing") != std::string::npos);
  CHECK(r.out.find("23 of 23 assets failed") != std::string::npos);
}

TEST_CASE("atlas-bench run: usage errors stop before any work, naming what is wrong and how to fix it") {
  if (!have_exe()) return;
  const auto dir = atlas::test::scratch_dir("cli_run_usage");
  // No model under the data directory: the same hint as the gate gives.
  const std::string nodata = (dir / "nodata").string();
  std::string args = "--data-dir '";
  args += nodata;
  args += "' run --suite ttft --no-store";
  auto r = run(args);
  CHECK(r.rc == 3);
  CHECK(r.out.find("models/stories260K/stories260K.bin: no such model file or directory (give --model, or --data-dir") !=
        std::string::npos);
  atlas::test::require_data(atlas::test::data_dir() / "models");
  const std::string data = "--data-dir '" + atlas::test::data_dir().string() + "' ";
  // A bad table format and a misspelled field of a later suite: rejected before ttft runs, and
  // nothing is stored.
  const auto store = dir / "store";
  r = run(data + "run --suite ttft --format json --out-dir '" + store.string() + "'");
  CHECK(r.rc == 3);
  CHECK(r.out.find("json") != std::string::npos);
  CHECK(r.out.find("[ttft") == std::string::npos);  // no progress line: nothing ran
  const auto cfg = dir / "typo.json";
  atlas::write_file_atomic(cfg, R"({"name": "typo", "suites": {"ttft": {"lengths": [8]}, "decode-anatomy": {"repetitons": 2}}})");
  r = run(data + "run --suite ttft,decode-anatomy --config '" + cfg.string() + "' --out-dir '" + store.string() + "'");
  CHECK(r.rc == 3);
  CHECK(r.out.find("field 'repetitons' is not a known option") != std::string::npos);
  CHECK(r.out.find("[ttft") == std::string::npos);
  CHECK_FALSE(fs::exists(store));
}

TEST_CASE("atlas-bench records list: a bad record is named with its reason and the rest listed; merge refuses deep nesting") {
  // One wrong-typed field or a 1e999 sample used to make `records list` useless for the whole
  // store; a record nested 10^6 deep crashed it (and merge's output grew quadratically).
  if (!have_exe()) return;
  const auto store = atlas::test::scratch_dir("cli_records_hostile");
  const auto good = atlas::records::write_to_store(atlas::test::sample_record(), store);
  auto text = atlas::records::record_text(atlas::test::sample_record("eeee000000000000000000000000000000000000"));
  const auto at = text.find("10.5");
  REQUIRE(at != std::string::npos);
  text.replace(at, 4, "1e999");
  const auto bad = store / "cpu-2c-x86_64" / "eeee000000000000000000000000000000000000" / "pr-20261129T143320Z.json";
  atlas::write_file_atomic(bad, text);
  const auto deep = store / "deep.json";
  atlas::write_file_atomic(deep, std::string(100000, '[') + std::string(100000, ']'));

  auto r = run("records list --benchmarks-dir '" + store.string() + "'");
  INFO(r.out);
  CHECK(r.rc == 0);
  CHECK(r.out.find("unreadable") != std::string::npos);
  CHECK(r.out.find(good.string()) != std::string::npos);
  CHECK(r.out.find("atlas-bench: unreadable record: " + bad.string() +
                   ": malformed JSON: [json.exception.out_of_range.406] number overflow parsing '1e999'") !=
        std::string::npos);
  // A record that reads but cannot stand for its path is listed as refused, with the reason a
  // pick gives for passing it over (here: its file was renamed to a later stamp).
  const auto renamed = good.parent_path() / "pr-20261130T000000Z.json";
  fs::copy_file(good, renamed);
  r = run("records list --benchmarks-dir '" + store.string() + "'");
  CHECK(r.rc == 0);
  CHECK(r.out.find("pr REFUSED") != std::string::npos);
  CHECK(r.out.find("atlas-bench: " + renamed.string() +
                   ": refused: its start_utc 2026-11-29T14:33:20Z disagrees with its file name's stamp 20261130T000000Z") !=
        std::string::npos);
  r = run("records list --format json --benchmarks-dir '" + store.string() + "'");
  CHECK(r.out.find("\"refused\": \"refused: its start_utc 2026-11-29T14:33:20Z disagrees") != std::string::npos);
  fs::remove(renamed);
  r = run("records merge --out '" + (store / "m.json").string() + "' '" + deep.string() + "' '" + good.string() + "'");
  CHECK(r.rc == 3);
  CHECK(r.out.find("deep.json: nested deeper than 256 levels (refused before parsing)") != std::string::npos);
  CHECK_FALSE(fs::exists(store / "m.json"));
}
