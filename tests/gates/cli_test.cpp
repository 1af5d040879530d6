// End-to-end checks of `atlas-bench baseline ...` and `quiet-box` through the real executable
// (ctest sets ATLAS_BENCH_EXE). The gate command itself runs the model and is exercised by
// `make gate`, not here (unit tests stay fast).
#include "common/build_paths.hpp"
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/json_file.hpp"
#include "gates/baseline.hpp"
#include "gates/baseline_lock.hpp"
#include "gates/error.hpp"
#include "gates/ratchet.hpp"
#include "gates/process.hpp"
#include "records/record_io.hpp"
#include "records/store.hpp"
#include "tests/built_exe.hpp"
#include "tests/records/fixture.hpp"
#include "tests/test_data.hpp"
#include "tests/skip.hpp"

using namespace atlas;

namespace {

struct Cli {
  std::string exe;
  std::filesystem::path cwd;
  gates::ProcessResult operator()(std::vector<std::string> args) const {
    args.insert(args.begin(), exe);
    return gates::run_process(args, cwd);
  }
};

std::optional<Cli> cli(const std::string& name) {
  const std::string exe = test::bench_exe_or_skip();
  if (exe.empty()) return std::nullopt;
  return Cli{exe, test::scratch_dir(name)};
}

}  // namespace

TEST_CASE("baseline init/show/accept/freeze through the CLI, with exit codes") {
  const auto run = cli("gates_cli_baseline");
  if (!run) return;
  auto r = test::sample_record();
  r.machine.machine_class = "cpu-test";
  write_file_atomic(run->cwd / "rec.json", records::record_text(r));
  // The shipped pr config keeps stored timed values only on quiet machine classes: without
  // "cpu-test" among them, init leaves the timed metric out.
  auto res = (*run)({"baseline", "init", "--record", "rec.json", "--baselines-dir", "plain", "--machine-class", "cpu-test"});
  REQUIRE(res.exit_status == 0);
  auto plain = gates::load_baseline(run->cwd / "plain" / "cpu-test" / "pr.BASELINE.json");
  CHECK_FALSE(plain.metrics.count("ttft/ttft_ms"));
  CHECK(plain.metrics.count("ttft/launches_per_token"));
  auto cfg = read_json_file(std::filesystem::path(ATLAS_SOURCE_DIR) / "gates" / "config" / "pr.json");
  cfg["quiet_machine_classes"] = {"cpu-test"};
  write_file_atomic(run->cwd / "gate.json", cfg.dump());
  const std::vector<std::string> common = {"--baselines-dir", "b", "--machine-class", "cpu-test"};
  auto with = [&](std::vector<std::string> a) {
    a.insert(a.end(), common.begin(), common.end());
    if (a[1] == "init" || a[1] == "ratchet" || a[1] == "accept") a.insert(a.end(), {"--config", "gate.json"});
    return a;
  };

  res = (*run)(with({"baseline", "init", "--record", "rec.json"}));
  INFO(res.err);
  REQUIRE(res.exit_status == 0);
  const auto path = run->cwd / "b" / "cpu-test" / "pr.BASELINE.json";
  auto b = gates::load_baseline(path);
  CHECK(b.metrics.at("ttft/ttft_ms").value == doctest::Approx(10.5));
  CHECK(b.metrics.at("ttft/launches_per_token").value == 42);

  CHECK((*run)(with({"baseline", "init", "--record", "rec.json"})).exit_status == 3);  // exists
  CHECK((*run)(with({"baseline", "accept", "--record", "rec.json", "--metric", "ttft/ttft_ms"})).exit_status == 3);

  r.suites["ttft"].metrics["launches_per_token"].samples = {50, 50, 50};
  write_file_atomic(run->cwd / "rec2.json", records::record_text(r));
  res = (*run)(with({"baseline", "ratchet", "--record", "rec2.json"}));
  CHECK(res.exit_status == 0);
  CHECK(gates::load_baseline(path).metrics.at("ttft/launches_per_token").value == 42);  // never loosens
  res = (*run)(with({"baseline", "accept", "--record", "rec2.json", "--metric", "ttft/launches_per_token", "--reason",
                     "fused kernel split for correctness"}));
  CHECK(res.exit_status == 0);
  b = gates::load_baseline(path);
  CHECK(b.metrics.at("ttft/launches_per_token").value == 50);
  CHECK(b.metrics.at("ttft/launches_per_token").history.back().reason == "fused kernel split for correctness");

  CHECK((*run)(with({"baseline", "freeze", "--reason", "release"})).exit_status == 0);
  CHECK(gates::load_baseline(path).frozen);
  CHECK((*run)(with({"baseline", "accept", "--record", "rec.json", "--metric", "ttft/ttft_ms", "--reason", "x"})).exit_status ==
        3);
  res = (*run)(with({"baseline", "show"}));
  CHECK(res.exit_status == 0);
  CHECK(res.out.find("FROZEN") != std::string::npos);

  auto j = read_json_file(path);
  j["metrics"]["ttft/ttft_ms"]["kind"] = "wall";
  write_file_atomic(path, j.dump());
  res = (*run)(with({"baseline", "show"}));
  CHECK(res.exit_status == 3);
  CHECK(res.err.find("pr.BASELINE.json: field metrics[\"ttft/ttft_ms\"].kind") != std::string::npos);
}

TEST_CASE("baseline accept with a --gate that disagrees with --config's gate is an input error and moves no BASELINE") {
  // It wrote the config's gate's BASELINE (pr) although --gate said pr-hybrid.
  const auto run = cli("gates_cli_gate_mismatch");
  if (!run) return;
  auto r = test::sample_record();
  r.machine.machine_class = "cpu-test";
  write_file_atomic(run->cwd / "rec.json", records::record_text(r));
  const std::vector<std::string> where = {"--baselines-dir", "b", "--machine-class", "cpu-test"};
  auto args = [&](std::vector<std::string> a) {
    a.insert(a.end(), where.begin(), where.end());
    return a;
  };
  REQUIRE((*run)(args({"baseline", "init", "--record", "rec.json"})).exit_status == 0);
  const auto pr = run->cwd / "b" / "cpu-test" / "pr.BASELINE.json";
  const std::string before = read_file(pr);
  auto cfg = read_json_file(std::filesystem::path(ATLAS_SOURCE_DIR) / "gates" / "config" / "pr.json");
  write_file_atomic(run->cwd / "gate.json", cfg.dump());  // its gate is "pr"
  r.suites["ttft"].metrics["launches_per_token"].samples = {50, 50, 50};
  write_file_atomic(run->cwd / "rec2.json", records::record_text(r));
  const auto res = (*run)(args({"baseline", "accept", "--gate", "pr-hybrid", "--config", "gate.json", "--record", "rec2.json",
                                "--metric", "ttft/launches_per_token", "--reason", "x"}));
  CHECK(res.exit_status == 3);
  CHECK(res.err.find("--gate pr-hybrid disagrees with --config gate.json") != std::string::npos);
  CHECK(read_file(pr) == before);
  CHECK_FALSE(std::filesystem::exists(run->cwd / "b" / "cpu-test" / "pr-hybrid.BASELINE.json"));
  // The same command without --gate moves pr's, as the config says.
  CHECK((*run)(args({"baseline", "accept", "--config", "gate.json", "--record", "rec2.json", "--metric",
                     "ttft/launches_per_token", "--reason", "x"})).exit_status == 0);
  CHECK(gates::load_baseline(pr).metrics.at("ttft/launches_per_token").value == 50);
}

TEST_CASE("baseline ratchet says which record it used; baseline show flags a value its history did not set") {
  const auto run = cli("gates_cli_ratchet_record");
  if (!run) return;
  // Two records of one commit in a store: the pr gate's and a newer ttft suite run. A commit
  // names the pr record for the pr baseline, every time, and the line says which and why.
  auto gate = test::sample_record("abcd000000000000000000000000000000000000", "2026-11-29T10:00:00Z");
  gate.machine.machine_class = "cpu-test";
  gate.verdicts = {{"overall", "pass"}};
  const auto pgate = records::write_to_store(gate, run->cwd / ".benchmarks");
  auto suite = gate;
  suite.gate_or_suite = "ttft";
  suite.verdicts = nullptr;
  suite.start_utc = "2026-11-29T11:00:00Z";
  records::write_to_store(suite, run->cwd / ".benchmarks");
  const std::vector<std::string> common = {"--baselines-dir", "b", "--machine-class", "cpu-test"};
  auto with = [&](std::vector<std::string> a) {
    a.insert(a.end(), common.begin(), common.end());
    return a;
  };
  auto res = (*run)(with({"baseline", "init", "--record", "abcd"}));
  INFO(res.out, res.err);
  REQUIRE(res.exit_status == 0);
  CHECK(res.out.rfind("record: .benchmarks/cpu-test/" + pgate.parent_path().filename().string() + "/" +
                          pgate.filename().string() + ": pr, ",
                      0) == 0);
  res = (*run)(with({"baseline", "ratchet", "--record", "abcd"}));
  CHECK(res.exit_status == 0);
  CHECK(res.out.rfind("record: .benchmarks/cpu-test/" + pgate.parent_path().filename().string() + "/" +
                          pgate.filename().string() + ": pr, ",
                      0) == 0);
  CHECK(res.out.find("(not gate pr)") != std::string::npos);

  res = (*run)(with({"baseline", "show"}));
  CHECK(res.out.find("WARNING") == std::string::npos);
  // A hand edit (a loosened value, no history entry): show says so.
  const auto path = run->cwd / "b" / "cpu-test" / "pr.BASELINE.json";
  auto j = read_json_file(path);
  j["metrics"]["ttft/launches_per_token"]["value"] = 60;
  write_file_atomic(path, j.dump());
  res = (*run)(with({"baseline", "show"}));
  CHECK(res.exit_status == 0);
  CHECK(res.out.find("WARNING ttft/launches_per_token: value 60.0 does not match its history: the last entry (init ") !=
        std::string::npos);
  CHECK(res.out.find(") set it to 42.0; edited by hand?") != std::string::npos);
  CHECK(res.out.find("1 metric(s) do not match their own history") != std::string::npos);
}

TEST_CASE("quiet-box command reports JSON and exits 0 (quiet) or 2 (not quiet)") {
  const auto run = cli("gates_cli_quiet");
  if (!run) return;
  const auto res = (*run)({"quiet-box", "--json"});
  CHECK((res.exit_status == 0 || res.exit_status == 2));
  const auto j = nlohmann::json::parse(res.out);
  CHECK(j["quiet"].get<bool>() == (res.exit_status == 0));
  CHECK(j["cpu"]["cores"].get<int>() >= 1);
  CHECK(j.contains("gpu"));
}

TEST_CASE("baseline accept waits for another command's lock on the BASELINE folder; neither update is lost") {
  // Two `baseline ratchet`/`accept` at once both read the old file and the later rename won:
  // 19 of 20 trials lost an update, both exiting 0.
  const auto run = cli("gates_cli_lock");
  if (!run) return;
  auto r = test::sample_record();
  r.machine.machine_class = "cpu-test";
  write_file_atomic(run->cwd / "rec.json", records::record_text(r));
  const std::vector<std::string> common = {"--baselines-dir", "b", "--machine-class", "cpu-test"};
  auto with = [&](std::vector<std::string> a) {
    a.insert(a.end(), common.begin(), common.end());
    return a;
  };
  REQUIRE((*run)(with({"baseline", "init", "--record", "rec.json"})).exit_status == 0);
  r.suites["ttft"].metrics["launches_per_token"].samples = {50, 50, 50};
  write_file_atomic(run->cwd / "rec2.json", records::record_text(r));
  const auto path = run->cwd / "b" / "cpu-test" / "pr.BASELINE.json";

  std::optional<gates::BaselineLock> held;
  held.emplace(path);  // another writer, in the middle of its read-change-write
  auto accepting = std::async(std::launch::async, [&] {
    return (*run)(with({"baseline", "accept", "--record", "rec2.json", "--metric", "ttft/launches_per_token", "--reason",
                        "split kernel"}));
  });
  // Wait until the accept is blocked on the folder's lock: the kernel lists a blocked flock
  // request in /proc/locks as "N: -> FLOCK ... <major>:<minor>:<inode> ...". A fixed sleep
  // would let a slow start on a loaded box read the file only after the write below.
  {
    struct stat st {};
    REQUIRE(::stat(path.parent_path().c_str(), &st) == 0);
    const std::string inode = ":" + std::to_string(st.st_ino) + " ";
    bool blocked = false;
    for (int i = 0; i < 400 && !blocked; ++i) {
      std::ifstream locks("/proc/locks");
      for (std::string line; std::getline(locks, line);)
        if (line.find("-> FLOCK") != std::string::npos && line.find(inode) != std::string::npos) blocked = true;
      if (!blocked) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    REQUIRE_MESSAGE(blocked, "the accept never waited for the lock (20 s)");
  }
  auto b = gates::load_baseline(path);
  gates::freeze(b, "ttft/launches_per_token", "the other writer's change", {"other", "2026-12-02T12:00:00Z"});
  gates::unfreeze(b, "ttft/launches_per_token", "the other writer's change", {"other", "2026-12-02T12:00:00Z"});
  gates::save_baseline(path, b);
  held.reset();
  const auto res = accepting.get();
  INFO(res.out, res.err);
  REQUIRE(res.exit_status == 0);
  CHECK(res.err.find("waiting for another baseline command to finish with b/cpu-test") != std::string::npos);
  const auto after = gates::load_baseline(path);
  const auto& m = after.metrics.at("ttft/launches_per_token");
  CHECK(m.value == 50);                 // the accept
  REQUIRE(m.history.size() == 4);       // init, the other writer's freeze and unfreeze, accept
  CHECK(m.history[1].reason == "the other writer's change");
  CHECK(m.history[3].reason == "split kernel");
}

TEST_CASE("baseline init refuses a record whose machine_class is not a plain folder name") {
  const auto run = cli("gates_cli_machine_class");
  if (!run) return;
  auto r = test::sample_record();
  r.machine.machine_class = "cpu-test";
  auto j = records::to_json(r);
  j["machine"]["machine_class"] = "../../escaped";  // the layout check of write_to_store is not on this path
  write_file_atomic(run->cwd / "rec.json", j.dump());
  const auto res = (*run)({"baseline", "init", "--record", "rec.json", "--baselines-dir", "b"});
  INFO(res.out, res.err);
  CHECK(res.exit_status == 3);
  CHECK(res.err.find("machine class \"../../escaped\": expected 1-100 letters, digits, '.', '_' or '-'") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(run->cwd / ".." / "escaped"));
  CHECK_THROWS_AS(gates::baseline_path("b", "..", "pr"), gates::GateError);
  CHECK(gates::baseline_path("b", "cpu-2c-x86_64", "pr") == std::filesystem::path("b/cpu-2c-x86_64/pr.BASELINE.json"));
}
