// What the gate compares: model identity and suite configs in the baseline (gates/identity.hpp),
// per-metric default tolerances, and the extra-work test hook keeping records out of baselines.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "gates/config.hpp"
#include "gates/error.hpp"
#include "gates/history_check.hpp"
#include "gates/identity.hpp"
#include "gates/ratchet.hpp"
#include "records/test_hooks.hpp"
#include "tests/gates/gate_fixtures.hpp"
#include "tests/test_data.hpp"

using namespace atlas;
using namespace atlas::gates;
using records::MetricKind;

namespace {
const ChangeStamp kStamp{"abc123", "2026-11-29T15:00:00Z"};

records::Record bin_record() {
  auto r = test::record_with("decode-anatomy", "us_per_token", test::metric({55, 56, 57, 55, 56}));
  r.model = {"models/stories260K/stories260K.bin", "llama2c", "llama", 260032, "b0a507e7ad0f6266"};
  r.suites["decode-anatomy"].config = {{"prompt_tokens", 32}, {"decode_tokens", 64}};
  return r;
}
}  // namespace

TEST_CASE("baseline init records the model and suite configs; a .gguf run against a .bin baseline is an error naming both") {
  const auto cfg = test::test_config();
  const Baseline b = init_baseline(bin_record(), cfg, "cpu-test", kStamp, "init");
  REQUIRE(b.identity.is_object());
  CHECK(b.identity["model"]["format"] == "llama2c");
  CHECK(b.identity["suites"]["decode-anatomy"]["decode_tokens"] == 64);
  // Survives the file round trip.
  CHECK(parse_baseline(to_json(b), "b.json").identity == b.identity);

  records::ModelInfo gguf{"models/stories260K-gguf/stories260K.gguf", "gguf", "llama", 260032, "5d1c0e7a"};
  try {
    check_model_identity(b, gguf, "baselines/cpu-test/pr.BASELINE.json");
    FAIL("expected GateError");
  } catch (const GateError& e) {
    const std::string m = e.what();
    CHECK(m.find("models/stories260K-gguf/stories260K.gguf (format gguf") != std::string::npos);
    CHECK(m.find("models/stories260K/stories260K.bin (format llama2c") != std::string::npos);
    CHECK(m.find("a gguf run cannot be judged against a llama2c baseline") != std::string::npos);
    CHECK(m.find("baselines/cpu-test/pr.BASELINE.json") != std::string::npos);
  }
  CHECK_NOTHROW(check_model_identity(b, bin_record().model, "b"));
  CHECK_NOTHROW(check_model_identity(Baseline{}, gguf, "b"));  // an old file without identity

  auto other = bin_record();
  other.suites["decode-anatomy"].config["decode_tokens"] = 16;
  CHECK_THROWS_WITH_AS(check_suite_identity(b, other, "b.json"),
                       doctest::Contains("suite decode-anatomy ran with a config that differs from the baseline b.json in decode_tokens"),
                       GateError);
  CHECK_NOTHROW(check_suite_identity(b, bin_record(), "b.json"));
}

TEST_CASE("instruction counts from another CPU are refused with the reason") {
  auto r = test::record_with("instructions", "instructions_per_decode_token",
                             test::metric({407304}, MetricKind::counted, records::Better::lower, "instructions"));
  r.suites["instructions"].config = {{"prompt_tokens", 32}, {"counted_on", {{"cpu_model", "AMD EPYC 9654"}}}};
  const Baseline b = init_baseline(r, test::test_config(), "cpu-test", kStamp, "init");
  r.suites["instructions"].config["counted_on"]["cpu_model"] = "Intel Xeon 8480";
  CHECK_THROWS_WITH_AS(check_suite_identity(b, r, "b.json"), doctest::Contains("comparable only on the same CPU"), GateError);
}

TEST_CASE("accept adopts the suite's new config") {
  auto b = init_baseline(bin_record(), test::test_config(), "cpu-test", kStamp, "init");
  auto r = bin_record();
  r.suites["decode-anatomy"].config["decode_tokens"] = 16;
  accept(b, "decode-anatomy/us_per_token", r, "shorter decode", test::test_config(), kStamp);
  CHECK(b.identity["suites"]["decode-anatomy"]["decode_tokens"] == 16);
  CHECK_NOTHROW(check_suite_identity(b, r, "b.json"));
}

TEST_CASE("metric_tolerance: the longest matching key prefix gives a new metric its tolerance") {
  auto j = to_json(test::test_config());
  j["metric_tolerance"] = {{"instructions/", {{"relative", 0.005}, {"absolute", 0}}},
                           {"instructions/ll_misses_", {{"relative", 0.005}, {"absolute", 1}}}};
  const GateConfig cfg = parse_gate_config(j, "c.json");
  CHECK(default_tolerance(cfg, MetricKind::counted, "instructions/instructions_per_decode_token").relative == 0.005);
  CHECK(default_tolerance(cfg, MetricKind::counted, "instructions/ll_misses_per_decode_token").absolute == 1);
  CHECK(default_tolerance(cfg, MetricKind::counted, "decode-anatomy/launches").relative == 0);
  CHECK(default_tolerance(cfg, MetricKind::timed, "ttft/ttft_ms").relative == cfg.timed_tolerance.relative);
  CHECK(to_json(parse_gate_config(to_json(cfg), "again")) == to_json(cfg));
  j["metric_tolerance"]["instructions/"]["relative"] = -1;
  CHECK_THROWS_WITH_AS(parse_gate_config(j, "c.json"), doctest::Contains("metric_tolerance[\"instructions/\"].relative: must be >= 0"), GateError);

  auto r = test::record_with("instructions", "instructions_per_decode_token",
                             test::metric({407304}, MetricKind::counted, records::Better::lower, "instructions"));
  j["metric_tolerance"]["instructions/"]["relative"] = 0.005;
  const Baseline b = init_baseline(r, parse_gate_config(j, "c.json"), "cpu-test", kStamp, "init");
  CHECK(b.metrics.at("instructions/instructions_per_decode_token").tolerance.relative == 0.005);
}

TEST_CASE("a record made with --inject-decode-work cannot become a baseline") {
  auto r = bin_record();
  r.config["target"] = {{"options", {{"backend", {{"inject_decode_delay_us", 0}, {"inject_decode_work", 1000}}}}}};
  CHECK(records::active_test_hooks(r) == std::vector<std::string>{"inject_decode_work=1000"});
  CHECK_THROWS_WITH_AS(init_baseline(r, test::test_config(), "cpu-test", kStamp, "init"),
                       doctest::Contains("inject_decode_work=1000"), GateError);
}

TEST_CASE("the shipped pr gate runs the instructions suite with a 0.5 % tolerance") {
  const auto pr = load_gate_config(test::source_dir() / "gates/config/pr.json");
  CHECK(std::find(pr.suites.begin(), pr.suites.end(), "instructions") != pr.suites.end());
  CHECK(default_tolerance(pr, MetricKind::counted, "instructions/instructions_per_decode_token").relative == 0.005);
}

TEST_CASE("every committed BASELINE pins the config of each suite it stores values for, and matches its own history") {
  // The committed CPU BASELINE once pinned 1 of its 5 suites: a pull request could shrink the
  // work of the other four (and lower their output fingerprints) with nothing to compare against.
  int files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(test::source_dir() / "baselines")) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || !name.ends_with(".BASELINE.json")) continue;
    ++files;
    CAPTURE(e.path().string());
    const Baseline b = load_baseline(e.path());
    CHECK(unpinned_suites(b).empty());
    for (const auto& [metric, m] : b.metrics) {
      CAPTURE(metric);
      CHECK(history_mismatch(m) == "");
    }
  }
  CHECK(files >= 3);
}

TEST_CASE("unpinned suites: the suites with stored metrics whose config the baseline does not pin") {
  Baseline b;
  const auto m = test::baseline_metric(5, {5}, MetricKind::counted);
  b.metrics["agentic/coding-agent/prefilled_tokens/turn=1"] = m;
  b.metrics["agentic/reuse_shortfall_tokens"] = m;
  b.metrics["bfcl/entries_failed"] = m;
  b.metrics["instructions/instructions_per_decode_token"] = m;
  CHECK(unpinned_suites(b) == std::vector<std::string>{"agentic", "bfcl", "instructions"});  // no identity at all
  b.identity = {{"model", nlohmann::json::object()}, {"suites", {{"instructions", {{"decode_tokens", 16}}}}}};
  CHECK(unpinned_suites(b) == std::vector<std::string>{"agentic", "bfcl"});  // the committed CPU file's shape
  // ratchet learns the configs of the suites the record ran (values unchanged).
  auto r = test::record_with("agentic", "reuse_shortfall_tokens", test::metric({5}, MetricKind::counted));
  r.suites["agentic"].config = {{"traces", {"coding-agent"}}};
  r.suites["bfcl"].name = "bfcl";
  r.suites["bfcl"].config = {{"name", "bfcl-pr"}};
  r.suites["bfcl"].metrics["entries_failed"] = test::metric({5}, MetricKind::counted);
  ratchet(b, r, test::test_config(), kStamp);
  CHECK(unpinned_suites(b).empty());
  CHECK(b.identity["suites"]["agentic"] == r.suites["agentic"].config);
  CHECK(b.identity["suites"]["instructions"] == nlohmann::json{{"decode_tokens", 16}});  // kept
}
