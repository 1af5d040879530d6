// Suites against targets that behave like real servers: a prefix cache the client
// cannot empty, output ids that are not listed, token counts only in usage. "Cold" must be cold
// by construction and checked; reuse must be judged with the target's own accounting.
#include <doctest/doctest.h>

#include "fake_target.hpp"
#include "suites/agentic/agentic_suite.hpp"
#include "suites/error.hpp"
#include "suites/ttft/ttft_suite.hpp"

using namespace atlas::suites;

namespace {

/// llama-server without /reset_prefix_cache: reset does nothing, so the client salts.
struct NoResetTarget : atlas::test::FakeTarget {
  void reset_session() override {}
  std::uint64_t cold_salt() const override { return 0x1234567u; }
};

/// A server that does not list output ids (SGLang, TRT-LLM; llama.cpp chat with tools): the
/// response has text and usage counts only.
struct NoIdsTarget : atlas::test::FakeTarget {
  TargetResponse generate(const TargetRequest& req) override {
    TargetResponse r = FakeTarget::generate(req);
    r.output_ids.clear();
    return r;
  }
};

SuiteOptions ttft_options() {
  SuiteOptions o;
  o.config = {{"lengths", {16, 64}}, {"decode_tokens", 4}};
  o.config_source = "<test>";
  o.warmup = 1;
  o.repetitions = 2;
  return o;
}

AgenticTrace small_trace() {
  return parse_trace(nlohmann::json::parse(R"({
    "format": "atlas-agentic-trace", "version": 1, "name": "small", "system": "S",
    "turns": [
      {"role": "user", "text": "abc"},
      {"role": "assistant", "max_tokens": 5},
      {"role": "tool", "name": "t", "tokens": 7},
      {"role": "assistant", "max_tokens": 3}
    ]})"),
                     "mem");
}

}  // namespace

TEST_CASE("ttft: cold requests are cold on a target whose cache cannot be reset (unique prefix per request)") {
  NoResetTarget target;
  const auto r = run_ttft_suite(target, ttft_options());
  for (const char* len : {"len=16", "len=64"}) {
    const auto& cached = r.metrics.at(std::string("cached_tokens/cold/") + len).samples;
    REQUIRE(cached.size() == 2);
    for (double c : cached) CHECK(c <= 1);  // BOS at most: never the 447 of 448 cached that llama-server reported before salting
    // The fake's TTFT is 1 ms + 0.01 ms per prefilled token: a cold 64-token prompt takes 1.63 ms
    // (1.64 with BOS reused counted as prefilled), a warm one 1.01 ms.
  }
  for (double t : r.metrics.at("ttft_ms/cold/len=64").samples) CHECK(t >= 1.62);
  for (double c : r.metrics.at("cached_tokens/warm/len=64").samples) CHECK(c == 63);
  CHECK(r.details["cold_reissued"] == 0);
  CHECK(r.details["cold_salted_requests"] == 6);  // (1 warmup + 2) x 2 lengths
}

TEST_CASE("ttft: a target that keeps reporting a cached prefix on cold requests fails the suite, not the numbers") {
  struct AlwaysCached : NoResetTarget {
    TargetResponse generate(const TargetRequest& req) override {
      TargetResponse r = NoResetTarget::generate(req);
      r.cached_tokens = r.prompt_tokens - 1;
      return r;
    }
  } target;
  CHECK_THROWS_WITH_AS(run_ttft_suite(target, ttft_options()), doctest::Contains("its cold latency cannot be measured"), SuiteError);
  CHECK(target.requests == 3);  // one request and two re-issues, then the suite gives up
}

TEST_CASE("ttft: in process (reset works) the prompts are not salted and nothing is re-issued") {
  atlas::test::FakeTarget target;
  const auto r = run_ttft_suite(target, ttft_options());
  CHECK(r.details["cold_salted_requests"] == 0);
  for (double c : r.metrics.at("cached_tokens/cold/len=16").samples) CHECK(c == 0);
}

TEST_CASE("ttft: without a context length the error names the option") {
  atlas::test::FakeTarget target;
  target.context = 0;
  CHECK_THROWS_WITH_AS(run_ttft_suite(target, ttft_options()), doctest::Contains("pass --context-length N"), SuiteError);
}

TEST_CASE("agentic: turn 1 is cold on a target that cannot reset; later turns reuse exactly") {
  NoResetTarget target;
  const AgenticTrace trace = small_trace();
  // Two sessions of the same trace: without a unique prefix the second session's turn 1 would
  // come from the first session's cache.
  (void)run_agentic_session(target, trace, 1, 0.0, AgenticApi::completions, 1);
  const AgenticSessionResult s = run_agentic_session(target, trace, 1, 0.0, AgenticApi::completions, 2);
  REQUIRE(s.turns.size() == 2);
  CHECK(s.turns[0].reused <= 1);
  CHECK(s.turns[1].expected_exact);
  CHECK(s.turns[1].reused == s.turns[1].expected_reused);
  for (const auto& t : s.turns) CHECK(t.reused + t.prefilled == t.prompt_tokens);
}

TEST_CASE("agentic: without the target's output ids, re-encoded text is no promise: no false shortfall") {
  // Re-encoding text can add a token (a leading space once gave 120 tokens of false
  // shortfall per repetition): then the next turn's expectation is not exact and not charged.
  struct ReencodeAddsToken : NoIdsTarget {
    TargetResponse generate(const TargetRequest& req) override {
      TargetResponse r = NoIdsTarget::generate(req);
      r.text = " " + r.text;  // what a server's detokenizer may hand back
      return r;
    }
  } target;
  const AgenticSessionResult s = run_agentic_session(target, small_trace(), 1, 0.0);
  REQUIRE(s.turns.size() == 2);
  CHECK(s.turns[0].output_tokens == 5);  // the target's count, not the re-encoded 6
  CHECK_FALSE(s.turns[1].expected_exact);
  CHECK(s.turns[1].ids_source == "local re-encoding");
  SuiteOptions o;
  o.config = {{"traces", {"coding-agent"}}};
  o.config_source = "<test>";
  o.warmup = 0;
  o.repetitions = 1;
  target.context = 4096;
  const auto r = run_agentic_suite(target, o);
  CHECK(r.metrics.at("reuse_shortfall_tokens").samples == std::vector<double>{0});
  CHECK(r.details["turns_without_exact_expectation"].get<int>() > 0);
}

TEST_CASE("agentic chat: reused + prefilled = the target's prompt tokens on every turn") {
  // The server renders chat messages with its own template: its prompt length is not the local
  // rendering's. Here it reports 20 more tokens than the ids; every identity must still hold.
  struct ChatServer : atlas::test::FakeTarget {
    TargetResponse generate(const TargetRequest& req) override {
      TargetResponse r = FakeTarget::generate(req);
      r.prompt_tokens += 20;
      r.prefilled_tokens += 20;
      return r;
    }
  } target;
  const AgenticSessionResult s = run_agentic_session(target, small_trace(), 1, 0.0, AgenticApi::chat);
  for (const auto& t : s.turns) {
    CHECK(t.reused + t.prefilled == t.prompt_tokens);
    CHECK(t.reused <= t.prompt_tokens);
    CHECK(t.expected_exact == (t.turn == 1));  // chat: later turns have no exact expectation
  }
  CHECK(s.turns[0].prompt_tokens == 31 + 20);
}

namespace {
/// Records whether each request was sent cold, and reports `turn1_cached` prefix tokens on the
/// first request after each reset (a server whose cache still held the session's head).
template <class Base>
struct ColdProbe : Base {
  std::vector<bool> cold;
  int turn1_cached = 0;
  bool fresh = false;
  void reset_session() override {
    Base::reset_session();
    fresh = true;
  }
  TargetResponse generate(const TargetRequest& req) override {
    cold.push_back(req.cold);
    TargetResponse r = Base::generate(req);
    if (fresh && turn1_cached > r.cached_tokens) {
      r.cached_tokens = turn1_cached;
      r.prompt_tokens = std::max(r.prompt_tokens, turn1_cached + 1);
      r.prefilled_tokens = r.prompt_tokens - r.cached_tokens;
    }
    fresh = false;
    return r;
  }
};
}  // namespace

TEST_CASE("agentic: turn 1 is sent as a cold request (llama.cpp: cache_prompt false), later turns reuse the cache") {
  for (const AgenticApi api : {AgenticApi::completions, AgenticApi::chat}) {
    ColdProbe<atlas::test::FakeTarget> target;
    const AgenticSessionResult s = run_agentic_session(target, small_trace(), 1, 0.0, api, 1);
    REQUIRE(s.turns.size() == 2);
    CHECK(target.cold == std::vector<bool>{true, false});
  }
}

TEST_CASE("agentic: a turn 1 the target served from its cache fails, in chat and completions mode, salted or not") {
  for (const AgenticApi api : {AgenticApi::completions, AgenticApi::chat}) {
    INFO("chat " << (api == AgenticApi::chat));
    // The reset answered (salt 0): only a shared BOS may come from the cache.
    ColdProbe<atlas::test::FakeTarget> reset_ok;
    reset_ok.turn1_cached = 1;
    CHECK(run_agentic_session(reset_ok, small_trace(), 1, 0.0, api, 1).turns.at(0).reused == 1);
    reset_ok.turn1_cached = 2;
    CHECK_THROWS_WITH_AS(run_agentic_session(reset_ok, small_trace(), 1, 0.0, api, 2),
                         doctest::Contains("agentic small turn 1: turn 1 is cold (reset, a unique prefix or the server's cache bypass) "
                                           "but the target reported cached_tokens = 2"),
                         SuiteError);
  }
  // Salted: completions allow a BOS; chat also the server template's head before the salt (32).
  ColdProbe<NoResetTarget> salted;
  salted.turn1_cached = 2;
  CHECK_THROWS_WITH_AS(run_agentic_session(salted, small_trace(), 1, 0.0, AgenticApi::completions, 3),
                       doctest::Contains("cached_tokens = 2"), SuiteError);
  salted.turn1_cached = 32;
  CHECK(run_agentic_session(salted, small_trace(), 1, 0.0, AgenticApi::chat, 4).turns.at(0).reused == 32);
  salted.turn1_cached = 33;
  CHECK_THROWS_WITH_AS(run_agentic_session(salted, small_trace(), 1, 0.0, AgenticApi::chat, 5),
                       doctest::Contains("cached_tokens = 33"), SuiteError);
}
