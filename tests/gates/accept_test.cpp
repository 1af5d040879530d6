// `baseline accept` as a library (gates/accept.hpp): which metrics a request names, and moving
// them all or none.
#include <doctest/doctest.h>

#include <string>

#include "gates/accept.hpp"
#include "gates/error.hpp"
#include "tests/gates/gate_fixtures.hpp"

using namespace atlas;
using namespace atlas::gates;

namespace {
/// The history stamp of every move here.
const ChangeStamp kStamp{"abc123", "2026-11-29T15:00:00Z"};

std::string request_error(const AcceptRequest& r) {
  try {
    check_accept_request(r);
  } catch (const GateError& e) {
    return e.what();
  }
  return "";
}

/// A record of suite "ttft" with p50 and p90 (samples), and "launches" without samples.
records::Record ttft_record(double p50, double p90) {
  auto r = test::record_with("ttft", "p50", test::metric(test::spread(p50, 2, 10)));
  r.run_id = "run-7";
  r.suites["ttft"].metrics["p90"] = test::metric(test::spread(p90, 2, 10));
  r.suites["ttft"].metrics["launches"] = test::metric({}, records::MetricKind::counted, records::Better::lower, "count");
  return r;
}
}  // namespace

TEST_CASE("accept request: a metric or a suite, a reason, and no --suite with --remove") {
  CHECK(request_error({{}, {}, "why", false}) == "accept: give --metric (one or more) or --suite");
  CHECK(request_error({{"ttft/p50"}, {}, "", false}) == "accept: --reason is required");
  CHECK(request_error({{}, {"ttft"}, "why", true}) == "accept --remove: name the metrics with --metric (--suite is not taken)");
  CHECK(request_error({{"ttft/p50"}, {}, "why", true}).empty());
  CHECK(request_error({{}, {"ttft"}, "why", false}).empty());
}

TEST_CASE("accept keys: the --metric keys, then each --suite's metrics that have samples") {
  const auto r = ttft_record(100, 150);
  const auto keys = accept_keys({{"other/x"}, {"ttft"}, "why", false}, r);
  CHECK(keys == std::vector<std::string>{"other/x", "ttft/p50", "ttft/p90"});
  try {
    (void)accept_keys({{}, {"agentic"}, "why", false}, r);
    FAIL("a suite the record lacks was taken");
  } catch (const GateError& e) {
    CHECK(std::string(e.what()) == "accept --suite agentic: the record (run run-7) has no metrics of that suite");
  }
}

TEST_CASE("accept_all moves every named metric with one reason, or none when one fails") {
  auto b = test::baseline_with("ttft/p50", test::baseline_metric(100, test::spread(100, 2, 10)));
  b.metrics["ttft/p90"] = test::baseline_metric(140, test::spread(140, 2, 10));
  const auto r = ttft_record(130, 180);

  // ttft/p90 is frozen: accepting the suite fails on it, and ttft/p50 (applied first) does not move.
  b.metrics["ttft/p90"].frozen = true;
  const Baseline before = b;
  CHECK_THROWS_AS(accept_all(b, {{}, {"ttft"}, "slower but correct", false}, r, test::test_config(), kStamp), GateError);
  CHECK(to_json(b) == to_json(before));

  b.metrics["ttft/p90"].frozen = false;
  const auto keys = accept_all(b, {{}, {"ttft"}, "slower but correct", false}, r, test::test_config(), kStamp);
  CHECK(keys == std::vector<std::string>{"ttft/p50", "ttft/p90"});
  CHECK(b.metrics["ttft/p50"].value == doctest::Approx(130));
  CHECK(b.metrics["ttft/p90"].value == doctest::Approx(180));
  for (const auto& key : keys) {
    REQUIRE(b.metrics[key].history.size() == 1);
    CHECK(b.metrics[key].history[0].action == HistoryAction::accept);
    CHECK(b.metrics[key].history[0].reason == "slower but correct");
    CHECK(b.metrics[key].history[0].commit == "abc123");
  }
}

TEST_CASE("remove_all drops every named metric, or none when one is unknown") {
  auto b = test::baseline_with("ttft/p50", test::baseline_metric(100, {}));
  b.metrics["ttft/p90"] = test::baseline_metric(140, {});
  const Baseline before = b;
  CHECK_THROWS_AS(remove_all(b, {{"ttft/p50", "ttft/absent"}, {}, "retired", true}, kStamp), GateError);
  CHECK(to_json(b) == to_json(before));
  remove_all(b, {{"ttft/p50", "ttft/p90"}, {}, "retired", true}, kStamp);
  CHECK(b.metrics.empty());
  CHECK(b.history.size() == 2);
}
