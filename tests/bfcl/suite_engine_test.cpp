// The bfcl suite through the registry, on the in-process engine with stories260K (the PR gate's
// configuration). Accuracy is near zero for this model; the test checks the run's shape.
#include <doctest/doctest.h>

#include "suites/engine_target.hpp"
#include "suites/registry.hpp"
#include "suites/suite_config.hpp"
#include "tests/test_data.hpp"

TEST_CASE("bfcl suite: PR configuration on stories260K through the registry") {
  if (!std::filesystem::exists(atlas::test::stories_bin())) {
    MESSAGE("skipped: " << atlas::test::stories_bin().string() << " not found");
    return;
  }
  atlas::engine::EngineOptions eo;
  eo.model = atlas::test::stories_bin().string();
  eo.tokenizer = atlas::test::stories_tok();
  atlas::suites::EngineTarget target(eo);
  REQUIRE(target.context_length() == 512);

  const auto set = atlas::suites::load_suite_set_config("pr");
  atlas::suites::SuiteOptions options;
  options.config = set.section("bfcl");
  options.config["data_dir"] = atlas::test::data_dir().string();
  options.config_source = set.source + ": suites.bfcl";
  const auto res = atlas::suites::find_suite("bfcl").run(target, options);

  CHECK(res.name == "bfcl");
  for (const char* cat : {"simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance"}) {
    INFO(cat);
    const auto& m = res.metrics.at(std::string("accuracy.") + cat);
    CHECK(m.samples.size() == 4);  // every prompt is longer than 512 tokens: all truncated, none skipped
    for (double s : m.samples) CHECK((s == 0.0 || s == 1.0));
  }
  CHECK(res.metrics.at("accuracy.overall").samples.size() == 20);
  CHECK(res.metrics.at("entries_truncated").samples == std::vector<double>{20});
  CHECK(res.metrics.at("entries_skipped").samples == std::vector<double>{0});
  CHECK(res.metrics.at("entries_failed").samples == std::vector<double>{0});
  CHECK(res.metrics.at("time_per_entry_ms").samples.size() == 20);
  CHECK(!res.metrics.at("decode_tokens_per_s").samples.empty());
  CHECK(res.details["entries"].size() == 20);
  // Deterministic: greedy decoding gives the same verdicts on a second run.
  const auto again = atlas::suites::find_suite("bfcl").run(target, options);
  CHECK(again.metrics.at("accuracy.overall").samples == res.metrics.at("accuracy.overall").samples);
}
