#include <doctest/doctest.h>

#include "gates/error.hpp"
#include "gates/ratchet.hpp"
#include "records/test_hooks.hpp"
#include "tests/gates/gate_fixtures.hpp"

using namespace atlas;
using namespace atlas::gates;
using records::Better;
using records::MetricKind;

namespace {
const ChangeStamp kStamp{"abc123", "2026-11-29T15:00:00Z"};
}

TEST_CASE("ratchet moves a timed metric only when the candidate is significantly better") {
  auto b = test::baseline_with("ttft/p50", test::baseline_metric(100, test::spread(100, 2, 10)));
  const auto cfg = test::test_config();

  // +2 % faster: inside the 5 % tolerance, so not an improvement -> no move.
  auto r_small = test::record_with("ttft", "p50", test::metric(test::spread(98, 2, 10)));
  auto res = ratchet(b, r_small, cfg, kStamp);
  CHECK(res.tightened.empty());
  CHECK(b.metrics["ttft/p50"].value == 100);

  // 20 % faster and significant -> moves to the candidate median, with samples and history.
  auto r_fast = test::record_with("ttft", "p50", test::metric(test::spread(80, 2, 10)));
  res = ratchet(b, r_fast, cfg, kStamp);
  REQUIRE(res.tightened.size() == 1);
  const auto& m = b.metrics["ttft/p50"];
  CHECK(m.value == doctest::Approx(80));
  CHECK(m.samples == test::spread(80, 2, 10));
  REQUIRE(m.history.size() == 1);
  CHECK(m.history[0].action == HistoryAction::ratchet);
  CHECK(*m.history[0].old_value == 100);
  CHECK(*m.history[0].new_value == doctest::Approx(80));
  CHECK(m.history[0].commit == "abc123");
}

TEST_CASE("ratchet never loosens") {
  auto b = test::baseline_with("ttft/p50", test::baseline_metric(100, test::spread(100, 2, 10)));
  auto slow = test::record_with("ttft", "p50", test::metric(test::spread(150, 2, 10)));
  const auto res = ratchet(b, slow, test::test_config(), kStamp);
  CHECK(res.tightened.empty());
  CHECK(b.metrics["ttft/p50"].value == 100);
  CHECK(b.metrics["ttft/p50"].history.empty());

  auto counted = test::baseline_with("d/launches", test::baseline_metric(7, {7}, MetricKind::counted, Better::lower, {}, "count"));
  auto more = test::record_with("d", "launches", test::metric({8}, MetricKind::counted, Better::lower, "count"));
  ratchet(counted, more, test::test_config(), kStamp);
  CHECK(counted.metrics["d/launches"].value == 7);
  auto fewer = test::record_with("d", "launches", test::metric({6}, MetricKind::counted, Better::lower, "count"));
  ratchet(counted, fewer, test::test_config(), kStamp);
  CHECK(counted.metrics["d/launches"].value == 6);  // exact metrics tighten on any improvement
}

TEST_CASE("frozen file or metric never moves under ratchet") {
  auto fast = test::record_with("ttft", "p50", test::metric(test::spread(80, 2, 10)));
  auto b = test::baseline_with("ttft/p50", test::baseline_metric(100, test::spread(100, 2, 10)));
  b.metrics["ttft/p50"].frozen = true;
  auto res = ratchet(b, fast, test::test_config(), kStamp);
  CHECK(res.tightened.empty());
  CHECK(res.frozen == std::vector<std::string>{"ttft/p50"});
  CHECK(b.metrics["ttft/p50"].value == 100);

  b.metrics["ttft/p50"].frozen = false;
  b.frozen = true;
  fast.suites["ttft"].metrics["p99"] = test::metric(test::spread(5, 1, 10));
  res = ratchet(b, fast, test::test_config(), kStamp);
  CHECK(res.tightened.empty());
  CHECK(res.added.empty());
  CHECK(b.metrics.size() == 1);
  CHECK(b.metrics["ttft/p50"].value == 100);
}

TEST_CASE("ratchet adds metrics new in the record with the default tolerance") {
  auto b = test::baseline_with("ttft/p50", test::baseline_metric(100, test::spread(100, 2, 10)));
  auto r = test::record_with("ttft", "p50", test::metric(test::spread(100, 2, 10)));
  r.suites["ttft"].metrics["launches"] = test::metric({12, 12}, MetricKind::counted, Better::lower, "count");
  auto cfg = test::test_config();
  cfg.counted_tolerance = {0, 0};
  const auto res = ratchet(b, r, cfg, kStamp);
  CHECK(res.added == std::vector<std::string>{"ttft/launches"});
  CHECK(b.metrics["ttft/launches"].value == 12);
  CHECK(b.metrics["ttft/launches"].history.at(0).action == HistoryAction::init);
}

TEST_CASE("accept loosens with a history entry and requires a reason") {
  auto b = test::baseline_with("ttft/p50", test::baseline_metric(100, test::spread(100, 2, 10)));
  auto slow = test::record_with("ttft", "p50", test::metric(test::spread(130, 2, 10)));
  CHECK_THROWS_AS(accept(b, "ttft/p50", slow, "", test::test_config(), kStamp), GateError);
  accept(b, "ttft/p50", slow, "new tokenizer is slower but correct", test::test_config(), kStamp);
  const auto& m = b.metrics["ttft/p50"];
  CHECK(m.value == doctest::Approx(130));
  CHECK(m.tolerance.relative == 0.05);  // tolerance kept
  REQUIRE(m.history.size() == 1);
  CHECK(m.history[0].action == HistoryAction::accept);
  CHECK(m.history[0].reason == "new tokenizer is slower but correct");
  CHECK(*m.history[0].old_value == 100);
  CHECK(*m.history[0].new_value == doctest::Approx(130));

  CHECK_THROWS_AS(accept(b, "ttft/absent", slow, "x", test::test_config(), kStamp), GateError);
  b.metrics["ttft/p50"].frozen = true;
  CHECK_THROWS_AS(accept(b, "ttft/p50", slow, "x", test::test_config(), kStamp), GateError);
}

TEST_CASE("accept adopts the tolerance the config now gives the metric") {
  // A changed metric_tolerance (e.g. simulated D1 misses, which move with code layout) reaches a
  // stored metric only through a reviewed accept; without it the old tolerance would stay forever.
  auto b = test::baseline_with("instructions/d1_misses_per_decode_token", test::baseline_metric(100, test::spread(100, 0, 3)));
  b.metrics["instructions/d1_misses_per_decode_token"].tolerance = {0.005, 0};
  auto cfg = test::test_config();
  cfg.metric_tolerance["instructions/d1_misses_"] = {0.05, 0};
  auto rec = test::record_with("instructions", "d1_misses_per_decode_token", test::metric(test::spread(101, 0, 3)));
  accept(b, "instructions/d1_misses_per_decode_token", rec, "D1 misses follow code layout: 5 %", cfg, kStamp);
  const auto& m = b.metrics["instructions/d1_misses_per_decode_token"];
  CHECK(m.value == doctest::Approx(101));
  CHECK(m.tolerance.relative == doctest::Approx(0.05));
  CHECK(m.tolerance.absolute == 0);
}

TEST_CASE("freeze and unfreeze a metric and the file, with history entries") {
  auto b = test::baseline_with("ttft/p50", test::baseline_metric(100, {}));
  freeze(b, "ttft/p50", "release 1.0 numbers", kStamp);
  CHECK(b.metrics["ttft/p50"].frozen);
  CHECK(b.metrics["ttft/p50"].history.back().action == HistoryAction::freeze);
  CHECK_THROWS_AS(freeze(b, "ttft/p50", "again", kStamp), GateError);
  unfreeze(b, "ttft/p50", "new hardware", kStamp);
  CHECK(!b.metrics["ttft/p50"].frozen);
  CHECK(b.metrics["ttft/p50"].history.back().action == HistoryAction::unfreeze);

  freeze(b, "", "freeze all", kStamp);
  CHECK(b.frozen);
  CHECK(b.history.back().action == HistoryAction::freeze);
  CHECK_THROWS_AS(freeze(b, "ttft/none", "x", kStamp), GateError);
  CHECK_THROWS_AS(unfreeze(b, "", "", kStamp), GateError);
  unfreeze(b, "", "thaw", kStamp);
  CHECK(!b.frozen);
}

TEST_CASE("remove drops a gate with a file-level history entry") {
  auto b = test::baseline_with("ttft/p50", test::baseline_metric(100, {}));
  remove_metric(b, "ttft/p50", "suite retired", kStamp);
  CHECK(b.metrics.empty());
  REQUIRE(b.history.size() == 1);
  CHECK(b.history[0].action == HistoryAction::remove);
  CHECK(b.history[0].metric == "ttft/p50");
  CHECK(*b.history[0].old_value == 100);
  CHECK(!b.history[0].new_value);
}

TEST_CASE("init_baseline takes medians, samples and default tolerances from a record") {
  auto r = test::record_with("ttft", "p50", test::metric({3, 1, 2}));
  r.suites["bfcl"].metrics["accuracy"] = test::metric({0.5}, MetricKind::accuracy, Better::higher, "fraction");
  r.suites["bfcl"].metrics["empty"] = test::metric({}, MetricKind::accuracy, Better::higher, "fraction");
  auto cfg = test::test_config();
  cfg.timed_tolerance = {0.07, 0.1};
  const auto b = init_baseline(r, cfg, "cpu-test", kStamp, "first baseline");
  CHECK(b.metrics.size() == 2);
  CHECK(b.metrics.at("ttft/p50").value == 2);
  CHECK(b.metrics.at("ttft/p50").samples == std::vector<double>{3, 1, 2});
  CHECK(b.metrics.at("ttft/p50").tolerance.relative == 0.07);
  CHECK(b.metrics.at("ttft/p50").tolerance.absolute == 0.1);
  CHECK(b.metrics.at("bfcl/accuracy").tolerance.relative == 0);
  CHECK(b.metrics.at("ttft/p50").history.at(0).action == HistoryAction::init);
  CHECK(b.machine_class == "cpu-test");
  CHECK(b.gate == "pr");
}

TEST_CASE("a record made with a test hook (planted slowdown) never moves a baseline") {
  auto b = test::baseline_with("ttft/p50", test::baseline_metric(100, test::spread(100, 2, 10)));
  const auto cfg = test::test_config();
  // Significantly better, but the run carried --inject-decode-delay-us 300: refused, nothing moves.
  auto r = test::record_with("ttft", "p50", test::metric(test::spread(80, 2, 10)));
  r.config["target"] = {{"options", {{"backend", {{"inject_decode_delay_us", 300}}}}}};
  CHECK_THROWS_WITH_AS(ratchet(b, r, cfg, kStamp), doctest::Contains("inject_decode_delay_us=300"), GateError);
  CHECK(b.metrics["ttft/p50"].value == 100);
  CHECK_THROWS_WITH_AS(accept(b, "ttft/p50", r, "because", cfg, kStamp), doctest::Contains("test hook"), GateError);
  CHECK_THROWS_WITH_AS(init_baseline(r, cfg, "cpu-2c-x86_64", kStamp, "first"), doctest::Contains("test hook"),
                       GateError);
  // The same run without the hook moves it.
  r.config["target"]["options"]["backend"]["inject_decode_delay_us"] = 0;
  CHECK(ratchet(b, r, cfg, kStamp).tightened.size() == 1);
  // The test-only environment hook counts too.
  r.config["env"] = {{"ATLAS_CUDA_VETO_LAYER", "3"}};
  CHECK(records::active_test_hooks(r) == std::vector<std::string>{"ATLAS_CUDA_VETO_LAYER=3"});
}

TEST_CASE("ratchet never moves or adds a timed value on a machine class that is not quiet") {
  // One lucky run on a shared box, ratcheted in, made 4 of 5 later gate runs on unchanged code
  // fail. With a "timed" section, timed values live in stored baselines only on quiet classes.
  auto cfg = test::test_config();
  cfg.timed.enabled = true;
  cfg.quiet_machine_classes = {"cpu-quiet"};
  auto b = test::baseline_with("ttft/p50", test::baseline_metric(100, test::spread(100, 2, 10)));
  b.metrics["ttft/launches"] = test::baseline_metric(10, {10}, MetricKind::counted);
  auto r = test::record_with("ttft", "p50", test::metric(test::spread(80, 2, 10)));  // "20% faster"
  r.suites["ttft"].metrics["new_timed"] = test::metric({5, 5, 5});
  r.suites["ttft"].metrics["launches"] = test::metric({9}, MetricKind::counted);
  auto res = ratchet(b, r, cfg, kStamp);
  CHECK(res.tightened == std::vector<std::string>{"ttft/launches"});  // counted metrics still tighten
  CHECK(b.metrics["ttft/p50"].value == 100);
  CHECK_FALSE(b.metrics.count("ttft/new_timed"));
  CHECK(res.timed_not_stored == std::vector<std::string>{"ttft/new_timed", "ttft/p50"});
  // On a quiet class the timed value moves as before.
  b.machine_class = "cpu-quiet";
  res = ratchet(b, r, cfg, kStamp);
  CHECK(b.metrics["ttft/p50"].value == doctest::Approx(80));
  // init leaves timed metrics out on a class that is not quiet.
  const auto fresh = init_baseline(r, cfg, "cpu-2c-x86_64", kStamp, "initial");
  CHECK(fresh.metrics.count("ttft/launches"));
  CHECK_FALSE(fresh.metrics.count("ttft/p50"));
  CHECK(init_baseline(r, cfg, "cpu-quiet", kStamp, "initial").metrics.count("ttft/p50"));
}
