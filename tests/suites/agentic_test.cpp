#include <doctest/doctest.h>

#include "common/sha256.hpp"
#include "fake_target.hpp"
#include "suites/agentic/agentic_suite.hpp"
#include "suites/error.hpp"
#include "suites/resources.hpp"

using namespace atlas::suites;

namespace {
AgenticTrace small_trace() {
  return parse_trace(nlohmann::json::parse(R"({
    "format": "atlas-agentic-trace", "version": 1, "name": "small", "system": "S",
    "turns": [
      {"role": "user", "text": "abc"},
      {"role": "assistant", "max_tokens": 5},
      {"role": "tool", "name": "t", "tokens": 7},
      {"role": "assistant", "max_tokens": 3},
      {"role": "user", "text": "xy"},
      {"role": "assistant", "max_tokens": 4}
    ]})"),
                     "mem");
}
}  // namespace

TEST_CASE("agentic session: exact reuse and prefill counts on a target with session-style caching") {
  atlas::test::FakeTarget target;
  const AgenticTrace trace = small_trace();
  const AgenticSessionResult s = run_agentic_session(target, trace, 1, 0.0);
  REQUIRE(s.turns.size() == 3);
  // Char tokenizer: preamble = BOS + "System: S\n" (10) = 11; "\nUser:" = 6; "abc" = 3;
  // "\nAssistant:" = 11; "\nTool (t):" = 10.
  CHECK(s.turns[0].prompt_tokens == 11 + 6 + 3 + 11);
  CHECK(s.turns[0].expected_reused == 0);
  CHECK(s.turns[0].reused == 0);
  CHECK(s.turns[0].prefilled == 31);
  CHECK(s.turns[0].output_tokens == 5);
  // turn 2: history 31 + 5 generated + tool (10 + 7) + assistant header 11
  CHECK(s.turns[1].prompt_tokens == 31 + 5 + 17 + 11);
  CHECK(s.turns[1].expected_reused == 31 + 4);
  CHECK(s.turns[1].reused == 35);
  CHECK(s.turns[1].prefilled == 64 - 35);
  CHECK(s.turns[2].prompt_tokens == 64 + 3 + 6 + 2 + 11);
  CHECK(s.turns[2].expected_reused == 64 + 2);
  CHECK(s.turns[2].reused == 66);
  CHECK(s.output_ids.size() == 12);
  // TTFT = base + prefill per token; wall = first request to last token.
  CHECK(s.turns[0].latency.ttft_ms == doctest::Approx(1.0 + 0.01 * 31));
  CHECK(s.turns[1].latency.ttft_ms == doctest::Approx(1.0 + 0.01 * 29));
}

TEST_CASE("agentic suite reports a reuse shortfall when the target does not reuse") {
  struct NoReuse : atlas::test::FakeTarget {
    atlas::suites::TargetResponse generate(const atlas::suites::TargetRequest& req) override {
      reset_session();
      return FakeTarget::generate(req);
    }
  } target;
  const AgenticTrace trace = small_trace();
  const AgenticSessionResult s = run_agentic_session(target, trace, 1, 0.0);
  CHECK(s.turns[1].reused == 0);
  CHECK(s.turns[1].expected_reused == 35);
}

TEST_CASE("agentic suite on the shipped traces: counted metrics and zero shortfall") {
  atlas::test::FakeTarget target;
  target.context = 2048;
  SuiteOptions o;
  o.warmup = 0;
  o.repetitions = 2;
  o.config = {{"traces", {"coding-agent", "retrieval-agent"}}};
  const auto r = run_agentic_suite(target, o);
  CHECK(r.name == "agentic");
  REQUIRE(r.metrics.count("reuse_shortfall_tokens"));
  CHECK(r.metrics.at("reuse_shortfall_tokens").samples == std::vector<double>{0, 0});
  REQUIRE(r.metrics.count("coding-agent/ttft_ms/turn=5"));
  CHECK(r.metrics.at("coding-agent/ttft_ms/turn=5").samples.size() == 2);
  CHECK(r.metrics.at("coding-agent/reused_tokens/turn=1").samples == std::vector<double>{0, 0});
  CHECK(r.metrics.at("coding-agent/reused_tokens/turn=2").samples[0] > 0);
  CHECK(r.metrics.at("retrieval-agent/session_wall_ms").samples.size() == 2);
  CHECK(r.details["reuse_shortfalls"].empty());
  // The traces' contents are in the config a BASELINE pins: an edited trace is another config.
  CHECK(r.config["trace_sha256"]["coding-agent"] ==
        atlas::sha256_file_hex(atlas::suites::resolve_resource("coding-agent", "traces")));
  CHECK(r.config["trace_sha256"].size() == 2);
}

TEST_CASE("agentic suite: an endpoint gets the trace's token ids by default, messages and tools with api=chat") {
  struct Recording : atlas::test::FakeTarget {
    std::vector<atlas::suites::TargetRequest> seen;
    atlas::suites::TargetResponse generate(const atlas::suites::TargetRequest& req) override {
      seen.push_back(req);
      return FakeTarget::generate(req);
    }
  };
  SuiteOptions o;
  o.warmup = 0;
  o.repetitions = 1;
  o.config = {{"traces", {"coding-agent"}}};
  Recording ids;
  ids.context = 2048;
  const auto r = run_agentic_suite(ids, o);
  CHECK(r.config["api"] == "completions");
  REQUIRE(!ids.seen.empty());
  for (const auto& req : ids.seen) {
    CHECK(req.messages.is_null());  // the ids are the prompt: the one the engine runs
    CHECK(req.tools.is_null());
    CHECK(!req.prompt_ids.empty());
  }

  o.config["api"] = "chat";
  Recording chat;
  chat.context = 2048;
  const auto rc = run_agentic_suite(chat, o);
  CHECK(rc.config["api"] == "chat");
  REQUIRE(chat.seen.size() == ids.seen.size());
  CHECK(chat.seen[0].messages.is_array());
  CHECK(chat.seen[0].messages[0]["role"] == "system");
  CHECK(chat.seen[0].tools.is_array());
  CHECK(chat.seen[1].messages.size() > chat.seen[0].messages.size());

  o.config["api"] = "grpc";
  o.config_source = "cfg.json: suites.agentic";
  CHECK_THROWS_WITH_AS(run_agentic_suite(chat, o), "cfg.json: suites.agentic: field 'api' must be \"completions\" or \"chat\", got \"grpc\"",
                       atlas::suites::SuiteError);
}
