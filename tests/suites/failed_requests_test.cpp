// A server that fails mid-run: ttft and agentic keep what they measured, count the failures,
// stop after three in a row and make the record invalid with the reason (the figures of the
// requests that completed stay).
#include <doctest/doctest.h>

#include "fake_target.hpp"
#include "suites/agentic/agentic_suite.hpp"
#include "suites/request_failures.hpp"
#include "suites/ttft/ttft_suite.hpp"

using namespace atlas::suites;

namespace {

/// Answers its first `alive` requests, then fails every one (a server killed mid-run), or only
/// the requests listed in `fail_at` (1-based).
struct DyingTarget : atlas::test::FakeTarget {
  int alive = 1 << 30;
  std::vector<int> fail_at;
  TargetResponse generate(const TargetRequest& req) override {
    const int n = requests + 1;
    if (n > alive || std::find(fail_at.begin(), fail_at.end(), n) != fail_at.end()) {
      ++requests;
      TargetResponse r;
      r.ok = false;
      r.error = "connect failed: Connection refused";
      return r;
    }
    return FakeTarget::generate(req);
  }
};

SuiteOptions ttft_options() {
  SuiteOptions o;
  o.config = {{"lengths", {16, 64}}, {"decode_tokens", 4}};
  o.config_source = "<test>";
  o.warmup = 0;
  o.repetitions = 3;
  return o;
}

}  // namespace

TEST_CASE("ttft: a server that dies mid-run leaves the measured requests in the result, invalid with the count") {
  DyingTarget target;
  target.alive = 5;  // rep 1 (cold+warm x 2 lengths) and rep 2's cold len=16 complete
  const auto r = run_ttft_suite(target, ttft_options());
  CHECK(r.metrics.at("ttft_ms/cold/len=16").samples.size() == 2);
  CHECK(r.metrics.at("ttft_ms/warm/len=16").samples.size() == 1);
  CHECK(r.metrics.at("ttft_ms/cold/len=64").samples.size() == 1);
  CHECK(r.metrics.at("ttft_ms/warm/len=64").samples.size() == 1);
  CHECK(r.details["requests"].size() == 5);
  // rep 2: warm len=16 fails, cold len=64 fails (its warm is not sent), rep 3 cold len=16 fails:
  // three in a row, so the suite stops; 8 requests sent of 12 planned.
  CHECK(r.details["failed_requests"] == 3);
  CHECK(r.details["requests_not_sent"] == 4);
  REQUIRE(r.details["failures"].size() == 3);
  CHECK(r.details["failures"][0]["request"] == "ttft warm len=16 rep 2/3");
  CHECK(r.details["failures"][0]["error"] == "connect failed: Connection refused");
  REQUIRE(r.details.contains("invalid_reason"));
  const std::string why = r.details["invalid_reason"];
  CHECK(why.find("3 of 8 requests failed (first: ttft warm len=16 rep 2/3: connect failed: Connection refused; fake)") == 0);
  CHECK(why.find("stopped after 3 consecutive failed requests") != std::string::npos);
  CHECK(why.find("4 of 12 requests not sent") != std::string::npos);
  CHECK(target.requests == 8);
}

TEST_CASE("ttft: one failed request is counted, the run goes on; without failures nothing is marked") {
  DyingTarget target;
  target.fail_at = {3};  // rep 1's cold len=64: its warm is not sent, everything else is
  const auto r = run_ttft_suite(target, ttft_options());
  CHECK(r.metrics.at("ttft_ms/cold/len=64").samples.size() == 2);
  CHECK(r.metrics.at("ttft_ms/warm/len=64").samples.size() == 2);
  CHECK(r.metrics.at("ttft_ms/cold/len=16").samples.size() == 3);
  CHECK(r.details["failed_requests"] == 1);
  CHECK(r.details["requests_not_sent"] == 1);
  CHECK(std::string(r.details["invalid_reason"]).find("1 of 11 requests failed") == 0);

  DyingTarget healthy;
  const auto ok = run_ttft_suite(healthy, ttft_options());
  CHECK(ok.details["failed_requests"] == 0);
  CHECK_FALSE(ok.details.contains("invalid_reason"));
  CHECK_FALSE(ok.details.contains("warm_not_reused"));
}

TEST_CASE("ttft: warm requests the target did not reuse are labelled on their rows and in a note") {
  struct NoCache : atlas::test::FakeTarget {
    TargetResponse generate(const TargetRequest& req) override {
      reset_session();  // a server with its prompt cache off
      return FakeTarget::generate(req);
    }
  } target;
  const auto r = run_ttft_suite(target, ttft_options());
  CHECK(r.details["warm_not_reused"]["len=16"] == 3);
  CHECK(r.details["warm_not_reused"]["len=64"] == 3);
  int labelled = 0;
  for (const auto& row : r.details["requests"]) {
    if (row["variant"] == "warm") labelled += row["reused"] == false;
    if (row["variant"] == "cold") CHECK_FALSE(row.contains("reused"));
  }
  CHECK(labelled == 6);
  bool noted = false;
  for (const auto& n : r.details["notes"]) {
    noted = noted || std::string(n).find("did not reuse (cached_tokens 0)") != std::string::npos;
  }
  CHECK(noted);
}

TEST_CASE("agentic: a failed turn ends its session; turns measured before it stay, the record is invalid") {
  const AgenticTrace trace = parse_trace(nlohmann::json::parse(R"({
    "format": "atlas-agentic-trace", "version": 1, "name": "small", "system": "S",
    "turns": [
      {"role": "user", "text": "abc"},
      {"role": "assistant", "max_tokens": 5},
      {"role": "tool", "name": "t", "tokens": 7},
      {"role": "assistant", "max_tokens": 3}
    ]})"), "mem");
  // The suite loads traces by name: run the session directly, then the suite on the bundled
  // traces with a server that dies after a few turns.
  DyingTarget one;
  one.fail_at = {2};
  const AgenticSessionResult s = run_agentic_session(one, trace, 1, 0.0);
  REQUIRE(s.turns.size() == 1);
  CHECK(s.failed == "connect failed: Connection refused");

  DyingTarget target;
  target.context = 4096;
  target.alive = 3;
  SuiteOptions o;
  o.config = {{"traces", {"coding-agent"}}};
  o.config_source = "<test>";
  o.warmup = 0;
  o.repetitions = 4;
  const auto r = run_agentic_suite(target, o);
  CHECK(r.metrics.at("coding-agent/ttft_ms/turn=1").samples.size() == 1);
  CHECK(r.metrics.at("coding-agent/ttft_ms/turn=3").samples.size() == 1);
  CHECK(r.metrics.count("coding-agent/ttft_ms/turn=4") == 0);
  // The broken session has no session totals; no repetition completed, so no total shortfall.
  CHECK(r.metrics.count("coding-agent/session_wall_ms") == 0);
  CHECK(r.metrics.at("reuse_shortfall_tokens").samples.empty());
  // Turn 4 of rep 1, turn 1 of reps 2 and 3: three in a row, so rep 4 is not sent.
  CHECK(r.details["failed_requests"] == 3);
  const std::string why = r.details["invalid_reason"];
  CHECK(why.find("3 of 6 requests failed (first: agentic coding-agent turn 4 rep 1: connect failed") == 0);
  CHECK(why.find("stopped after 3 consecutive failed requests") != std::string::npos);
  CHECK(why.find("14 of 20 requests not sent") != std::string::npos);
  CHECK(target.requests == 6);
}
