// The bfcl suite through the registry, on the in-process engine with stories260K (the PR gate's
// configuration). Accuracy is near zero for this model; the test checks the run's shape.
#include <doctest/doctest.h>

#include "suites/engine_target.hpp"
#include "suites/registry.hpp"
#include "suites/suite_config.hpp"
#include "tests/test_data.hpp"

namespace {

/// The in-process engine on stories260K with its tokenizer.
atlas::engine::EngineOptions stories_options() {
  atlas::engine::EngineOptions eo;
  eo.model = atlas::test::stories_bin().string();
  eo.tokenizer = atlas::test::stories_tok();
  return eo;
}

/// The PR configuration's bfcl section, reading BFCL from the data directory.
atlas::suites::SuiteOptions pr_bfcl_options() {
  const auto set = atlas::suites::load_suite_set_config("pr");
  atlas::suites::SuiteOptions options;
  options.config = set.section("bfcl");
  options.config["data_dir"] = atlas::test::data_dir().string();
  options.config_source = set.source + ": suites.bfcl";
  return options;
}
}  // namespace

TEST_CASE("bfcl suite: PR configuration on stories260K through the registry") {
  atlas::test::require_data(atlas::test::stories_bin());
  atlas::suites::EngineTarget target(stories_options());
  REQUIRE(target.context_length() == 512);

  const auto options = pr_bfcl_options();
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

namespace {
/// The in-process engine, recording its prompts; with a salt it acts as a server whose cache the
/// client cannot empty: every entry is then timed by a separate salted request (suites/cold_request.hpp).
class SaltedEngine final : public atlas::suites::Target {
 public:
  SaltedEngine(atlas::suites::EngineTarget& engine, std::uint64_t salt) : engine_(&engine), salt_(salt) {}
  std::string name() const override { return "salted " + engine_->name(); }
  atlas::suites::TargetResponse generate(const atlas::suites::TargetRequest& req) override {
    prompts.push_back(req.prompt_ids);
    return engine_->generate(req);
  }
  void reset_session() override { engine_->reset_session(); }
  std::uint64_t cold_salt() const override { return salt_; }
  const atlas::engine::Tokenizer& tokenizer() const override { return engine_->tokenizer(); }
  int context_length() const override { return engine_->context_length(); }
  nlohmann::json provenance() const override { return engine_->provenance(); }
  std::vector<std::vector<int>> prompts;

 private:
  atlas::suites::EngineTarget* engine_;
  std::uint64_t salt_;
};
}  // namespace

TEST_CASE("bfcl suite: cold salts go only into separate timing requests: the in-process outputs and verdicts are the unsalted ones (stories260K)") {
  atlas::test::require_data(atlas::test::stories_bin());
  atlas::suites::EngineTarget target(stories_options());
  SaltedEngine unsalted(target, 0), salted(target, 0x5A17u);
  const auto options = pr_bfcl_options();
  const auto plain = atlas::suites::find_suite("bfcl").run(unsalted, options);
  const auto cold = atlas::suites::find_suite("bfcl").run(salted, options);
  CHECK(plain.details["cold_salted_requests"] == 0);
  CHECK(plain.details["cold_timed_separately"] == 0);
  CHECK(cold.details["cold_salted_requests"] == 20);
  CHECK(cold.details["cold_timed_separately"] == 20);
  REQUIRE(salted.prompts.size() == 40);  // per entry: the scored request, then the salted timing request
  REQUIRE(unsalted.prompts.size() == 20);
  // Every prompt is truncated to the context budget (512 - max_new_tokens). The scored request
  // is the unsalted one; the timing request's salt takes 4 of its tokens from the prompt's head
  // after BOS, never from its tail (the question, "Assistant:").
  for (std::size_t i = 0; i < 20; ++i) {
    const auto& p = unsalted.prompts[i];
    CHECK(salted.prompts[2 * i] == p);
    const auto& q = salted.prompts[2 * i + 1];
    REQUIRE(q.size() == p.size());
    CHECK(q.size() + plain.config["max_new_tokens"].get<std::size_t>() == 512);
    CHECK(q[0] == p[0]);
    CHECK(std::vector<int>(q.begin() + 1, q.begin() + 5) != std::vector<int>(p.begin() + 1, p.begin() + 5));
    CHECK(std::equal(q.begin() + 5, q.end(), p.begin() + 5));
  }
  // The outputs scored are the unsalted requests' in both runs: entry by entry the same.
  for (std::size_t i = 0; i < plain.details["entries"].size(); ++i) {
    INFO("entry " << i);
    CHECK(cold.details["entries"][i]["output"] == plain.details["entries"][i]["output"]);
    CHECK(cold.details["entries"][i]["valid"] == plain.details["entries"][i]["valid"]);
  }
  for (const auto& [name, m] : plain.metrics) {
    if (name.rfind("accuracy.", 0) != 0 && name.rfind("entries_", 0) != 0) continue;
    INFO(name);
    CHECK(cold.metrics.at(name).samples == m.samples);
  }
  CHECK(cold.details["error_types"] == plain.details["error_types"]);
}
