#include <doctest/doctest.h>

#include <sstream>

#include "fake_target.hpp"
#include "suites/error.hpp"
#include "suites/registry.hpp"
#include "suites/runner.hpp"
#include "suites/ttft/ttft_suite.hpp"
#include "tests/test_data.hpp"

using namespace atlas::suites;

namespace {
SuiteSetConfig tiny_config() {
  return parse_suite_set_config(nlohmann::json::parse(R"({
    "name": "tiny", "seed": 3,
    "suites": {
      "ttft": {"warmup": 0, "repetitions": 2, "lengths": [8, 32, 600], "decode_tokens": 3},
      "agentic": {"warmup": 0, "repetitions": 2, "traces": ["coding-agent"]},
      "decode-anatomy": {"warmup": 0, "repetitions": 2, "prompt_tokens": 8, "decode_tokens": 4},
      "bfcl": {"categories": ["simple_python"], "per_category": 1, "max_new_tokens": 4}
    }})"),
                                "tiny.json");
}
}  // namespace

TEST_CASE("suite names expand") {
  CHECK(expand_suite_names("all") == std::vector<std::string>{"ttft", "agentic", "decode-anatomy", "bfcl"});
  CHECK(expand_suite_names("agentic,ttft,agentic") == std::vector<std::string>{"agentic", "ttft"});
  CHECK_THROWS_WITH(expand_suite_names("ttfx"), doctest::Contains("unknown suite 'ttfx'"));
}

TEST_CASE("suite config: a description that is not a string is a SuiteError naming the field (fuzz_suite_config)") {
  // json::value("description", "") threw nlohmann's untyped type_error for a number (found by
  // fuzz_suite_config, 2026-12-01; the input is fuzz/corpus/suite_config/regress-description-number.json).
  const auto j = nlohmann::json::parse(R"({"name": "pr", "description": 6.5e300, "suites": {}})");
  CHECK_THROWS_WITH_AS(parse_suite_set_config(j, "c.json"), doctest::Contains("c.json: field 'description' must be a string, got 6.5e+300"),
                       SuiteError);
  const auto ok = parse_suite_set_config(nlohmann::json::parse(R"({"name": "pr", "description": "d", "suites": {}})"), "c.json");
  CHECK(ok.description == "d");
}

TEST_CASE("the shipped pr and nightly configs load and name every suite") {
  for (const char* name : {"pr", "nightly"}) {
    const SuiteSetConfig c = load_suite_set_config(name);
    CHECK(c.name == name);
    for (const auto& s : suite_registry()) CHECK(c.suites.contains(s.name));
    for (const auto& s : suite_registry()) CHECK_NOTHROW(suite_options(c, s.name, {}));
  }
}

TEST_CASE("options: config values, then command-line overrides") {
  const SuiteSetConfig c = tiny_config();
  SuiteOptions o = suite_options(c, "ttft", {});
  CHECK(o.warmup == 0);
  CHECK(o.repetitions == 2);
  CHECK(o.seed == 3);
  RunOverrides ov;
  ov.repetitions = 5;
  ov.seed = 9;
  o = suite_options(c, "ttft", ov);
  CHECK(o.repetitions == 5);
  CHECK(o.seed == 9);
  CHECK(o.config_source == "tiny.json: suites.ttft");
}

TEST_CASE("a bad config field is named") {
  SuiteSetConfig c = tiny_config();
  c.suites["ttft"]["decode_tokens"] = "eight";
  atlas::test::FakeTarget t;
  CHECK_THROWS_WITH(run_ttft_suite(t, suite_options(c, "ttft", {})),
                    doctest::Contains("tiny.json: suites.ttft: field 'decode_tokens' must be an integer"));
  c.suites["ttft"].erase("decode_tokens");
  c.suites["ttft"]["lenghts"] = {1};
  CHECK_THROWS_WITH(run_ttft_suite(t, suite_options(c, "ttft", {})), doctest::Contains("'lenghts' is not a known option"));
}

TEST_CASE("TTFT suite: exact figures on scripted timestamps") {
  atlas::test::FakeTarget t;
  const SuiteSetConfig c = tiny_config();
  const auto r = run_ttft_suite(t, suite_options(c, "ttft", {}));
  CHECK(r.details["skipped_lengths"] == nlohmann::json::array({600}));
  // cold: base 1 ms + 32 tokens x 10 us
  CHECK(r.metrics.at("ttft_ms/cold/len=32").samples == std::vector<double>{1.32, 1.32});
  CHECK(r.metrics.at("prefill_tok_s/cold/len=32").samples[0] == doctest::Approx(32 / 1.32e-3));
  // warm: 31 of 32 tokens reused, 1 prefilled
  CHECK(r.metrics.at("ttft_ms/warm/len=32").samples[0] == doctest::Approx(1.01));
  CHECK(r.metrics.at("cached_tokens/warm/len=32").samples == std::vector<double>{31, 31});
  // 2 reps x 2 lengths x (cold + warm) requests, 1 + 3 tokens each
  CHECK(r.metrics.at("tpot_ms").samples.size() == 8);
  CHECK(r.metrics.at("tpot_ms").samples[0] == doctest::Approx(0.25));
  CHECK(r.metrics.at("itl_ms").samples.size() == 8 * 3);
  CHECK(r.metrics.at("decode_tok_s").samples[0] == doctest::Approx(4000.0));
  // First request: len=8 cold, TTFT 1 ms + 8 x 10 us; E2E adds 3 gaps of 0.25 ms; the fake's
  // first byte is its first token.
  CHECK(r.metrics.at("e2e_ms").samples.size() == 8);
  CHECK(r.metrics.at("e2e_ms").samples[0] == doctest::Approx(1.08 + 0.75));
  CHECK(r.metrics.at("ttfb_ms").samples.size() == 8);
  CHECK(r.metrics.at("ttfb_ms").samples[0] == doctest::Approx(1.08));
}

TEST_CASE("run_suite_set produces every section with samples") {
  atlas::test::FakeTarget t;
  t.context = 4096;  // the character tokenizer spends a token per byte of the trace's text
  SuiteSetRequest req;
  req.suites = expand_suite_names("all");
  req.data_dir = atlas::test::data_dir();
  req.config = tiny_config();
  std::ostringstream log;
  LineProgress progress(log);
  req.progress = &progress;
  const atlas::records::Record rec = run_suite_set(t, req);
  CHECK(rec.valid);
  CHECK(rec.gate_or_suite == "tiny");
  CHECK(rec.config["target"]["kind"] == "fake");
  CHECK(rec.config["suites"].size() == 4);
  REQUIRE(rec.suites.size() == 4);
  for (const auto& [name, s] : rec.suites) {
    CHECK(s.name == name);
    CHECK_FALSE(s.metrics.empty());
    for (const auto& [m, metric] : s.metrics) {
      INFO(name << " " << m);
      CHECK_FALSE(metric.samples.empty());
      CHECK_FALSE(metric.unit.empty());
    }
  }
  CHECK(log.str().find("[ttft 1/12] cold len=8 rep 1/2") != std::string::npos);
  CHECK(rec.start_utc.size() == 20);
}

TEST_CASE("a bad config field in a later suite stops the set before the first suite runs") {
  atlas::test::FakeTarget t;
  SuiteSetRequest req;
  req.suites = {"ttft", "decode-anatomy"};
  req.config = tiny_config();
  req.config.suites["decode-anatomy"]["repetitons"] = 3;  // misspelled
  CHECK_THROWS_WITH_AS(check_suite_set(req), doctest::Contains("field 'repetitons' is not a known option"), SuiteError);
  CHECK_THROWS_WITH_AS(run_suite_set(t, req), doctest::Contains("suites.decode-anatomy: field 'repetitons'"), SuiteError);
  CHECK(t.requests == 0);
  req.config = tiny_config();
  req.config.suites["decode-anatomy"]["decode_tokens"] = 0;  // a range the suite checks itself
  CHECK_THROWS_WITH_AS(run_suite_set(t, req), doctest::Contains("field 'decode_tokens' must be >= 2"), SuiteError);
  req.config = tiny_config();
  req.config.suites["bfcl"] = {{"categories", {"no_such_category"}}};
  req.suites = {"ttft", "bfcl"};
  CHECK_THROWS_WITH(run_suite_set(t, req), doctest::Contains("unknown category \"no_such_category\""));
  CHECK(t.requests == 0);
}

TEST_CASE("a failing suite marks the record invalid and the others still run") {
  atlas::test::FakeTarget t;
  t.context = 20;
  SuiteSetRequest req;
  req.suites = {"ttft", "decode-anatomy"};
  req.config = tiny_config();
  req.config.suites["ttft"]["lengths"] = {32};  // 32 + 3 tokens do not fit
  const auto rec = run_suite_set(t, req);
  CHECK_FALSE(rec.valid);
  CHECK(rec.invalid_reason.find("suite ttft: ttft: no prompt length fits") != std::string::npos);
  CHECK(rec.suites.count("decode-anatomy") == 1);
}
