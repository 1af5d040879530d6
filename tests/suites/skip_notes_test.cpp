// Prompt lengths and traces that do not fit the target's context are said, not only recorded
// (the nightly config asks for up to 32768-token prompts; on a 512-token model they were
// skipped silently): a note in the suite's details, printed under its table and in progress.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

#include "fake_target.hpp"
#include "suites/agentic/agentic_suite.hpp"
#include "suites/progress.hpp"
#include "suites/report.hpp"
#include "suites/ttft/ttft_suite.hpp"

using namespace atlas::suites;

TEST_CASE("ttft: skipped prompt lengths are noted with the reason, under the table and in progress") {
  atlas::test::FakeTarget t;
  t.context = 128;
  SuiteOptions o;
  o.warmup = 0;
  o.repetitions = 1;
  o.config = {{"lengths", {8, 32, 600, 4096}}, {"decode_tokens", 3}};
  std::ostringstream log;
  LineProgress progress(log);
  o.progress = &progress;
  const auto r = run_ttft_suite(t, o);
  const std::string want = "skipped prompt lengths 600, 4096: length + 3 decode tokens exceeds the target's context of 128 tokens";
  REQUIRE(r.details["notes"].size() == 1);
  CHECK(r.details["notes"][0] == want);
  const Table table = metrics_table(r);
  CHECK(std::find(table.notes.begin(), table.notes.end(), want) != table.notes.end());
  CHECK(log.str().find("[ttft] done: 2 lengths x 1 repetitions; " + want) != std::string::npos);
}

TEST_CASE("ttft: nothing skipped, no note") {
  atlas::test::FakeTarget t;
  t.context = 128;
  SuiteOptions o;
  o.warmup = 0;
  o.repetitions = 1;
  o.config = {{"lengths", {8}}, {"decode_tokens", 3}};
  const auto r = run_ttft_suite(t, o);
  CHECK_FALSE(r.details.contains("notes"));
  CHECK(metrics_table(r).notes.empty());
}

TEST_CASE("agentic: a trace too long for the context is noted with the tokens it needs") {
  atlas::test::FakeTarget t;
  t.context = 2048;
  SuiteOptions o;
  o.warmup = 0;
  o.repetitions = 1;
  o.config = {{"traces", {"coding-agent", "coding-agent-long"}}};
  const auto r = run_agentic_suite(t, o);
  REQUIRE(r.details["skipped"].size() == 1);
  const int needs = r.details["skipped"][0]["needs_tokens"].get<int>();
  REQUIRE(r.details["notes"].size() == 1);
  CHECK(r.details["notes"][0] == "skipped trace coding-agent-long (needs " + std::to_string(needs) +
                                     " tokens, the target's context is 2048)");
}
