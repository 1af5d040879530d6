// `atlas-bench run` as a library (runs/suite_run.hpp): the flags checked against each other
// before any work, and the record both targets assemble.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "runs/suite_run.hpp"
#include "tests/test_data.hpp"

using namespace atlas;
namespace fs = std::filesystem;

namespace {

/// The message plan_suite_run throws for `o` ("" when it throws nothing).
std::string plan_error(const runs::SuiteRunOptions& o) {
  try {
    (void)runs::plan_suite_run(o, test::data_dir().string());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

runs::SuiteRunOptions endpoint_run() {
  runs::SuiteRunOptions o;
  o.endpoint = "http://127.0.0.1:1/v1";
  return o;
}

/// A suite config file in a scratch folder.
fs::path write_config(const std::string& name, const std::string& text) {
  const fs::path p = test::scratch_dir("suite_run_" + name) / (name + ".json");
  write_file_atomic(p, text);
  return p;
}

struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("suite run plan: the default runs the four suites of the pr config with the overrides and data directory") {
  runs::SuiteRunOptions o;
  o.repetitions = 3;
  o.seed = 9;
  const auto req = runs::plan_suite_run(o, "/data");
  CHECK(req.suites == std::vector<std::string>{"ttft", "agentic", "decode-anatomy", "bfcl"});
  CHECK(req.config.name == "pr");
  CHECK(req.overrides.repetitions == 3);
  CHECK_FALSE(req.overrides.warmup.has_value());
  CHECK(req.overrides.seed == 9u);
  CHECK(req.data_dir == "/data");
}

TEST_CASE("suite run plan: load flags run the load suite and win over the config's section") {
  runs::SuiteRunOptions o = endpoint_run();
  o.rates = "2,8.5";
  o.burstiness = 0.5;
  o.num_prompts = 4;
  o.goodput = "ttft_ms:500,tpot_ms:50";
  const auto req = runs::plan_suite_run(o, "/data");
  CHECK(req.suites == std::vector<std::string>{"load"});
  const auto& load = req.config.section("load");
  CHECK(load["rates"] == nlohmann::json::array({2.0, 8.5}));
  CHECK_FALSE(load.contains("concurrency"));  // the pr config's closed loop gives way to --rate
  CHECK(load["burstiness"] == 0.5);
  CHECK(load["num_prompts"] == 4);
  CHECK(load["input_len"] == 128);  // from the config file
  CHECK(load["goodput"]["ttft_ms"] == 500.0);
  CHECK(load["goodput"]["tpot_ms"] == 50.0);

  runs::SuiteRunOptions c = endpoint_run();
  c.concurrency = "1,2";
  CHECK(runs::plan_suite_run(c, "/data").config.section("load")["concurrency"] == nlohmann::json::array({1, 2}));
}

TEST_CASE("suite run plan: a flag no suite of the run reads is a usage error naming the flag") {
  runs::SuiteRunOptions o;
  o.suite = "ttft";
  o.concurrency = "2";
  o.num_prompts = 3;
  CHECK(plan_error(o) ==
        "--suite ttft does not run the load suite, so --concurrency, --num-prompts would be ignored: add load to "
        "--suite (--suite ttft,load) or leave --suite out");

  runs::SuiteRunOptions e;
  e.served_model = "m";
  e.context_length = 512;
  CHECK(plan_error(e) ==
        "--served-model, --context-length: endpoint options, but no --endpoint URL: the suites run in process and "
        "would ignore them");

  runs::SuiteRunOptions i = endpoint_run();
  i.inject_decode_delay_us = 5;
  CHECK(plan_error(i).rfind("--inject-decode-delay-us delays the in-process engine", 0) == 0);

  runs::SuiteRunOptions b = endpoint_run();
  b.backend_given = b.threads_given = true;
  CHECK(plan_error(b).rfind("--backend, --threads: options of the in-process engine", 0) == 0);
  b.backend_given = false;
  CHECK(plan_error(b).rfind("--threads: options of the in-process engine", 0) == 0);

  runs::SuiteRunOptions w = endpoint_run();
  w.suite = "load,bfcl";
  w.warmup = 1;
  CHECK(plan_error(w).rfind("--warmup: no suite of this run (load,bfcl) repeats its measurements", 0) == 0);
  w.repetitions = 2;
  CHECK(plan_error(w).rfind("--warmup, --repetitions: no suite of this run (load,bfcl)", 0) == 0);

  runs::SuiteRunOptions n = endpoint_run();
  n.suite = "instructions";
  CHECK(plan_error(n).rfind("--suite instructions counts the in-process engine's instructions", 0) == 0);

  runs::SuiteRunOptions l;
  l.suite = "load";
  CHECK(plan_error(l) == "--suite load drives a server: give --endpoint URL");
}

TEST_CASE("suite run plan: contradicting load flags and bad values are usage errors naming flag and value") {
  runs::SuiteRunOptions both = endpoint_run();
  both.concurrency = "1";
  both.rates = "2";
  CHECK(plan_error(both).rfind("--concurrency and --rate: give one", 0) == 0);

  runs::SuiteRunOptions cap = endpoint_run();
  cap.concurrency = "4";
  cap.max_concurrency = 2;
  CHECK(plan_error(cap).rfind("--max-concurrency caps the requests in flight of an open loop", 0) == 0);

  runs::SuiteRunOptions closed = endpoint_run();
  closed.concurrency = "4";
  closed.burstiness = 2;
  CHECK(plan_error(closed).find("this load run is a closed loop (--concurrency), which never uses it") != std::string::npos);

  runs::SuiteRunOptions bad = endpoint_run();
  bad.rates = "2,fast";
  CHECK(plan_error(bad) == "--rate: 'fast' is not a number > 0");
  bad.rates = "-1";
  CHECK(plan_error(bad) == "--rate: '-1' is not a number > 0");
  runs::SuiteRunOptions half = endpoint_run();
  half.concurrency = "1.5";
  CHECK(plan_error(half) == "--concurrency: '1.5' is not a whole number");
  runs::SuiteRunOptions slo = endpoint_run();
  slo.goodput = "ttft_ms=500";
  CHECK(plan_error(slo) == "--goodput: 'ttft_ms=500' is not KEY:MS (ttft_ms:500,tpot_ms:50)");
}

TEST_CASE("suite run plan: --burstiness on a config's closed loop names the config file and its field") {
  const fs::path cfg = write_config("closed", R"({"name": "closed", "suites": {"load": {"concurrency": [2], "num_prompts": 4}}})");
  runs::SuiteRunOptions o = endpoint_run();
  o.config = cfg.string();
  o.burstiness = 1.5;
  CHECK(plan_error(o) == "--burstiness shapes the arrival gaps of an open loop (--rate); this load run is a closed loop (" +
                             cfg.string() + ": suites.load.concurrency), which never uses it");
}

TEST_CASE("suite run record: provenance, command line and ATLAS_* environment, the endpoint's API key redacted") {
  const ScopedEnv key("ATLAS_TEST_RUN_KEY", "sk-secret");
  const ScopedEnv other("ATLAS_TEST_RUN_OTHER", "kept");
  records::Record rec;
  runs::stamp_run_record(rec, {test::source_dir(), {"atlas-bench", "run", "--suite", "ttft"}, "ATLAS_TEST_RUN_KEY"});
  CHECK(rec.command_line == std::vector<std::string>{"atlas-bench", "run", "--suite", "ttft"});
  CHECK(rec.config["env"]["ATLAS_TEST_RUN_KEY"] == "<redacted: --api-key-env>");
  CHECK(rec.config["env"]["ATLAS_TEST_RUN_OTHER"] == "kept");
  CHECK_FALSE(rec.machine.machine_class.empty());
  CHECK_FALSE(rec.build.compiler.empty());

  records::Record engine_rec;  // no endpoint: nothing is redacted
  runs::stamp_run_record(engine_rec, {test::source_dir(), {"atlas-bench", "run"}, ""});
  CHECK(engine_rec.config["env"]["ATLAS_TEST_RUN_KEY"] == "sk-secret");
}

TEST_CASE("suite run record: an engine run names its model relative to the data directory, its machine and command line") {
  test::require_data(test::stories_bin());
  const fs::path cfg = write_config(
      "tiny", R"({"name": "tiny", "suites": {"ttft": {"warmup": 0, "repetitions": 1, "lengths": [8], "decode_tokens": 2}}})");
  runs::SuiteRunOptions o;
  o.suite = "ttft";
  o.config = cfg.string();
  o.threads = 1;
  const auto eo = runs::suite_run_engine_options(o, test::data_dir().string());
  CHECK(fs::path(eo.model).lexically_normal() == test::stories_bin().lexically_normal());
  const auto req = runs::plan_suite_run(o, test::data_dir().string());
  const auto rec = runs::run_suites_on_engine(eo, req, {test::source_dir(), {"atlas-bench", "run", "--suite", "ttft"}, ""});
  CHECK(rec.valid);
  CHECK(rec.gate_or_suite == "ttft");
  REQUIRE(rec.suites.count("ttft") == 1);
  CHECK(rec.model.path == "models/stories260K/stories260K.bin");
  CHECK_FALSE(rec.model.format.empty());
  CHECK_FALSE(rec.machine.machine_class.empty());
  CHECK(rec.command_line == std::vector<std::string>{"atlas-bench", "run", "--suite", "ttft"});
  CHECK(rec.config.contains("env"));
  CHECK(rec.config.contains("engine"));
}
