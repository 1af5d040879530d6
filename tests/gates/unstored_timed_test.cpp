// A "new" timed row must say what is true on the class it ran on: on a class that is not quiet
// the stored BASELINE never holds timed values, so "`baseline ratchet` adds it" was false there.
#include <doctest/doctest.h>

#include "gates/unstored_timed.hpp"
#include "tests/gates/gate_fixtures.hpp"

using namespace atlas;
using namespace atlas::gates;

namespace {
Comparison comparison_with_new_rows() {
  Comparison c;
  const auto timed = test::metric({1, 2, 3});
  const auto counted = test::metric({7}, records::MetricKind::counted, records::Better::lower, "count");
  const CompareSettings s;
  c.verdicts = {judge_metric("decode-anatomy/us_per_token", nullptr, &timed, s),
                judge_metric("agentic/x/ttft_ms/turn=3", nullptr, &timed, s),
                judge_metric("decode-anatomy/launches_per_token", nullptr, &counted, s)};
  return c;
}
}  // namespace

TEST_CASE("new timed rows on a class that is not quiet say how they are judged, not that ratchet adds them") {
  GateConfig cfg = test::test_config();
  cfg.timed.enabled = true;
  cfg.timed.metrics = {{"decode-anatomy/us_per_token", 0.03}};
  Comparison c = comparison_with_new_rows();
  REQUIRE(c.verdicts[1].why.find("`baseline ratchet` adds it") != std::string::npos);  // the generic text
  explain_unstored_timed(c, cfg, "cpu-2c-x86_64");
  CHECK(c.verdicts[0].why == "timed: judged against the merge-base (the timed table), never stored for cpu-2c-x86_64");
  CHECK(c.verdicts[1].why.find("timed: reported, not gated on cpu-2c-x86_64") == 0);
  CHECK(c.verdicts[1].why.find("never stores timed values here") != std::string::npos);
  CHECK(c.verdicts[2].why.find("`baseline ratchet` adds it") != std::string::npos);  // counted: ratchet does add it
  Comparison skipped = comparison_with_new_rows();
  explain_unstored_timed(skipped, cfg, "cpu-2c-x86_64", "--no-timed");
  CHECK(skipped.verdicts[0].why ==
        "timed: judged against the merge-base, not this time (--no-timed), never stored for cpu-2c-x86_64");

  // On a quiet class ratchet does store timed values: the generic text stays.
  cfg.quiet_machine_classes = {"quiet-8c"};
  Comparison q = comparison_with_new_rows();
  explain_unstored_timed(q, cfg, "quiet-8c");
  CHECK(q.verdicts[1].why.find("`baseline ratchet` adds it") != std::string::npos);
}
