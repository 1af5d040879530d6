// The pull-request gate as one library call (runs::run_pr_gate): the record written without a
// baseline, a pass against the baseline made from it, a regression once a counted value is
// tightened below what the model does. One ttft length and a short decode anatomy, no timed
// judgement: seconds, not minutes.
#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <sstream>
#include <string>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/exit_code.hpp"
#include "common/json_file.hpp"
#include "engine/model.hpp"
#include "gates/baseline.hpp"
#include "gates/config.hpp"
#include "gates/error.hpp"
#include "gates/ratchet.hpp"
#include "records/record_io.hpp"
#include "records/store.hpp"
#include "runs/pr_gate.hpp"
#include "tests/gates/git_repo.hpp"
#include "tests/rlimit.hpp"
#include "tests/test_data.hpp"

using namespace atlas;
namespace fs = std::filesystem;

namespace {

/// A gate config beside `dir`: the shipped pr gate cut to one short ttft run.
fs::path small_gate_config(const fs::path& dir) {
  nlohmann::json suite = read_json_file(test::source_dir() / "suites" / "config" / "pr.json");
  suite["suites"] = {{"ttft", {{"warmup", 0}, {"repetitions", 5}, {"lengths", {16}}, {"decode_tokens", 2}, {"warm", false}}},
                     {"decode-anatomy", {{"warmup", 0}, {"repetitions", 5}, {"prompt_tokens", 8}, {"decode_tokens", 4}}}};
  write_file_atomic(dir / "suite.json", suite.dump());
  nlohmann::json gate = read_json_file(test::source_dir() / "gates" / "config" / "pr.json");
  gate["suites"] = {"ttft", "decode-anatomy"};
  gate["suite_config"] = (dir / "suite.json").string();
  write_file_atomic(dir / "gate.json", gate.dump());
  return dir / "gate.json";
}

runs::PrGateOptions options(const fs::path& dir) {
  runs::PrGateOptions o;
  o.common.config = small_gate_config(dir).string();
  o.common.engine.model = test::stories_bin().string();
  o.common.baselines_dir = (dir / "baselines").string();
  o.common.machine_class = "cpu-test";
  o.common.store = (dir / "store").string();
  o.common.allow_noisy = true;
  o.no_timed = true;
  return o;
}

/// The working directory for one test: the gate judges the checkout it runs in.
struct InDirectory {
  explicit InDirectory(const fs::path& dir) : old(fs::current_path()) { fs::current_path(dir); }
  ~InDirectory() { fs::current_path(old); }
  fs::path old;
};

}  // namespace

TEST_CASE("run_pr_gate: not judged without a baseline (exit 3), pass against its own baseline, regression when tightened") {
  REQUIRE_MESSAGE(fs::exists(test::stories_bin()), test::stories_bin().string() << " not found (make test needs the data directory)");
  // A checkout of its own whose main holds the gate config: the gate judges with the configs and
  // BASELINE committed at the merge-base (here HEAD, on main).
  const fs::path dir = test::scratch_dir("runs_pr_gate");
  test::git(dir, {"init", "-q"});
  const runs::PrGateOptions o = options(dir);
  test::git(dir, {"add", "gate.json", "suite.json"});
  test::git(dir, {"commit", "-q", "-m", "gate config"});
  const InDirectory in_checkout(dir);
  const runs::RunContext ctx{test::data_dir().string(), {"atlas-bench", "gate"}};

  std::ostringstream out;
  CHECK(runs::run_pr_gate(o, ctx, out) == to_int(ExitCode::input_error));
  CHECK(out.str().empty());  // nothing judged: no tables
  const auto stored = records::list_records(o.common.store);
  REQUIRE(stored.size() == 1);
  const records::Record first = records::read_record(stored[0].path);
  CHECK(first.verdicts["overall"] == "not judged");
  CHECK(first.command_line == std::vector<std::string>{"atlas-bench", "gate"});
  REQUIRE(first.suites.count("ttft") == 1);

  const gates::GateConfig cfg = gates::load_gate_config(o.common.config);
  const fs::path baseline_file = gates::baseline_path(o.common.baselines_dir, "cpu-test", "pr");
  gates::Baseline b = gates::init_baseline(first, cfg, "cpu-test", {first.git.commit, first.start_utc}, "test");
  // Only counted and accuracy values are stored on a class that is not quiet.
  REQUIRE_FALSE(b.metrics.empty());
  gates::save_baseline(baseline_file, b);
  // Not committed yet, the BASELINE is nobody's reviewed floor: the gate cannot pass.
  out.str("");
  CHECK(runs::run_pr_gate(o, ctx, out) == to_int(ExitCode::inconclusive));
  CHECK(out.str().find("is not committed at the merge-base") != std::string::npos);
  test::git(dir, {"add", "baselines"});
  test::git(dir, {"commit", "-q", "-m", "baseline"});

  out.str("");
  CHECK(runs::run_pr_gate(o, ctx, out) == to_int(ExitCode::pass));
  CHECK(out.str().find("pass") != std::string::npos);

  // A BASELINE that does not pin a suite's config (the committed CPU one pinned 1 of 5): the
  // judge runs the merge-base's suite config, and nothing shows the stored values were measured
  // with it, so a config changed since they were stored would shape the verdict unseen.
  gates::Baseline unpinned = b;
  unpinned.identity["suites"].erase("decode-anatomy");
  gates::save_baseline(baseline_file, unpinned);
  test::git(dir, {"commit", "-q", "-am", "baseline without the decode-anatomy pin"});
  out.str("");
  CHECK(runs::run_pr_gate(o, ctx, out) == to_int(ExitCode::inconclusive));
  CHECK(out.str().find("does not pin the config of suite decode-anatomy (identity.suites.decode-anatomy)") !=
        std::string::npos);
  CHECK(out.str().find("pin the config of suite ttft") == std::string::npos);  // ttft is pinned
  gates::save_baseline(baseline_file, b);
  test::git(dir, {"commit", "-q", "-am", "baseline pinned again"});

  // A counted metric made twice as good as what the model does: a regression.
  const std::string key = "decode-anatomy/stage_calls_per_token/attention";
  REQUIRE(b.metrics.count(key) == 1);
  // One attention call per layer and token.
  CHECK(b.metrics.at(key).value == engine::load_model(test::stories_bin()).config.n_layers);
  b.metrics.at(key).value /= 2;
  gates::save_baseline(baseline_file, b);
  out.str("");
  CAPTURE(key);
  CHECK(runs::run_pr_gate(o, ctx, out) == to_int(ExitCode::regression));
  CHECK(out.str().find(key.substr(key.find('/') + 1)) != std::string::npos);

  // A record that cannot be written (a full disk; here a store under a plain file) no longer
  // hides the verdict: the table and the result are printed, then exit 3 for the lost record.
  write_file_atomic(dir / "not-a-folder", "x");
  runs::PrGateOptions unwritable = o;
  unwritable.common.store = (dir / "not-a-folder" / "store").string();
  out.str("");
  CHECK(runs::run_pr_gate(unwritable, ctx, out) == to_int(ExitCode::input_error));
  CHECK(out.str().find(key.substr(key.find('/') + 1)) != std::string::npos);  // the verdict table
  CHECK(out.str().find("result above: regression, but not recorded: ") != std::string::npos);
  CHECK(out.str().find("(exit 3)") != std::string::npos);

  // The machine failing the write (a full disk; here RLIMIT_FSIZE: EFBIG, SIGXFSZ ignored) is the
  // machine's failure: the verdict is printed, then exit 4, not the wrong path's 3.
  const auto old_xfsz = std::signal(SIGXFSZ, SIG_IGN);
  int code = -1;
  out.str("");
  test::with_rlimit(RLIMIT_FSIZE, 1024, [&] { code = runs::run_pr_gate(o, ctx, out); });
  std::signal(SIGXFSZ, old_xfsz);
  INFO(out.str());
  CHECK(code == to_int(ExitCode::machine_error));
  CHECK(out.str().find("result above: regression, but not recorded: ") != std::string::npos);
  CHECK(out.str().find("(exit 4)") != std::string::npos);
}

TEST_CASE("run_pr_gate: --timed-only on a config without a timed section is a GateError before anything runs") {
  const fs::path dir = test::scratch_dir("runs_pr_gate_timed_only");
  runs::PrGateOptions o = options(dir);
  nlohmann::json gate = read_json_file(o.common.config);
  gate.erase("timed");
  write_file_atomic(o.common.config, gate.dump());
  o.timed_only = true;
  std::ostringstream out;
  CHECK_THROWS_WITH_AS(runs::run_pr_gate(o, {test::data_dir().string(), {}}, out),
                       "pr gate config has no \"timed\" section, so --timed-only has nothing to run", gates::GateError);
  CHECK(records::list_records(o.common.store).empty());
}
