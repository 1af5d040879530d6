// `atlas-bench diff` judges with the gate's rule (gates/diff_judge.hpp): the same verdict, the
// same tolerance, the same reason, and never "regressed" at a change the gate calls "same".
#include "common/build_paths.hpp"
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "gates/compare.hpp"
#include "gates/config.hpp"
#include "gates/diff_judge.hpp"
#include "records/diff.hpp"
#include "records/printers/diff_printer.hpp"
#include "tests/gates/gate_fixtures.hpp"

using namespace atlas;
using namespace atlas::gates;

namespace {

GateConfig pr_config() { return load_gate_config(gate_config_path("pr", "", ATLAS_SOURCE_DIR)); }

records::DiffOptions judged(const GateConfig& cfg) {
  records::DiffOptions o;
  o.judge = diff_judge(cfg);
  o.rule_text = "judged by the pr gate's rules";
  return o;
}

}  // namespace

TEST_CASE("a counted change inside the gate's tolerance is unchanged in diff, with the gate's reason") {
  const auto cfg = pr_config();
  // The case that was reported: instructions per decoded token 232,241.2 -> 232,241.4 printed as
  // "232241 -> 232241 +0.00% regressed"; the pr gate's tolerance for instructions/ is 0.5 %.
  const auto a = test::record_with("instructions", "instructions_per_decode_token",
                                   test::metric({232241.2}, records::MetricKind::counted, records::Better::lower, "count"));
  const auto b = test::record_with("instructions", "instructions_per_decode_token",
                                   test::metric({232241.4}, records::MetricKind::counted, records::Better::lower, "count"));
  const auto d = records::diff_records(a, b, judged(cfg));
  REQUIRE(d.metrics.size() == 1);
  const auto& m = d.metrics[0];
  CHECK(m.change == records::Change::unchanged);
  CHECK(m.test == "exact-tolerance");
  // The same sentence the gate writes for that change.
  BaselineMetric base = test::baseline_metric(232241.2, {232241.2}, records::MetricKind::counted, records::Better::lower,
                                              default_tolerance(cfg, records::MetricKind::counted,
                                                                "instructions/instructions_per_decode_token"),
                                              "count");
  const Verdict v = judge_metric("instructions/instructions_per_decode_token", &base,
                                 &b.suites.at("instructions").metrics.at("instructions_per_decode_token"),
                                 compare_settings(cfg));
  CHECK(v.status == VerdictStatus::same);
  CHECK(m.why == v.why);
  CHECK(m.why.find("within the tolerance 1161") != std::string::npos);
  // Text shows the tiny change with digits that are not zero, and the reason beside it.
  std::ostringstream text;
  records::make_diff_printer("text")->print(d, text);
  INFO(text.str());
  CHECK(text.str().find("+8.6e-05%") != std::string::npos);
  CHECK(text.str().find("+0.00%") == std::string::npos);
  CHECK(text.str().find("regressed") == std::string::npos);
  CHECK(text.str().find("judged by the pr gate's rules") != std::string::npos);
}

TEST_CASE("diff verdicts follow the gate: beyond the tolerance regressed, equality metrics, timed undecided") {
  const auto cfg = pr_config();
  const auto opts = judged(cfg);
  auto one = [&](const std::string& suite, const std::string& name, const records::Metric& ma, const records::Metric& mb) {
    const auto d = records::diff_records(test::record_with(suite, name, ma), test::record_with(suite, name, mb), opts);
    REQUIRE(d.metrics.size() == 1);
    return d.metrics[0];
  };
  using K = records::MetricKind;
  using B = records::Better;
  // +1 % instructions: beyond 0.5 %.
  auto m = one("instructions", "instructions_per_decode_token", test::metric({1000}, K::counted, B::lower, "count"),
               test::metric({1010}, K::counted, B::lower, "count"));
  CHECK(m.change == records::Change::regressed);
  CHECK(m.why.find("beyond the tolerance") != std::string::npos);
  // A lost CUDA graph is a regression, not an improvement (the gate's equality metrics).
  m = one("decode-anatomy", "graph_launches_per_token", test::metric({1}, K::counted, B::lower, "count"),
          test::metric({0}, K::counted, B::lower, "count"));
  CHECK(m.change == records::Change::regressed);
  CHECK(m.test == "equality");
  // Timed, 3 samples a side: fewer than the gate's min_samples, so undecided (exit 2), never a
  // verdict from 3 points.
  m = one("ttft", "ttft_ms", test::metric({10, 10.1, 10.2}), test::metric({20, 20.1, 20.2}));
  CHECK(m.change == records::Change::noise);
  CHECK(std::string(records::to_string(m.change)) == "undecided");
  CHECK(m.test == "min-samples");
  // Timed, clearly slower with enough samples.
  m = one("ttft", "ttft_ms", test::metric({10, 10.1, 10.2, 10.3, 10.4, 10.5, 10.6, 10.7}),
          test::metric({20, 20.1, 20.2, 20.3, 20.4, 20.5, 20.6, 20.7}));
  CHECK(m.change == records::Change::regressed);
  CHECK(m.test == "mann-whitney-u");
  CHECK(m.p_value < 0.01);
}
