#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <sstream>

#include "gates/gate_run.hpp"
#include "gates/printers/gate_printer.hpp"
#include "gates/unstored_timed.hpp"
#include "tests/gates/gate_fixtures.hpp"

using namespace atlas;
using namespace atlas::gates;

namespace {

// The baseline: ttft/p50 around 100 ms (10 samples), decode-anatomy/launches = 7.
Baseline two_suite_baseline() {
  auto b = test::baseline_with("ttft/p50", test::baseline_metric(100, test::spread(100, 2, 10)));
  b.metrics["decode-anatomy/launches"] =
      test::baseline_metric(7, {7}, records::MetricKind::counted, records::Better::lower, {0, 0}, "count");
  return b;
}

records::Record attempt_record(const std::vector<std::string>& suites, std::vector<double> ttft) {
  records::Record r;
  r.git.commit = "c0ffee";
  for (const auto& s : suites) {
    if (s == "ttft") r.suites["ttft"].metrics["p50"] = test::metric(ttft);
    if (s == "decode-anatomy") {
      r.suites["decode-anatomy"].metrics["launches"] =
          test::metric({7}, records::MetricKind::counted, records::Better::lower, "count");
    }
  }
  return r;
}

class FakeGuard : public AttemptGuard {
 public:
  explicit FakeGuard(std::vector<bool> throttled) : throttled_(std::move(throttled)) {}
  void begin(int) override {}
  std::optional<std::string> end(int attempt) override {
    if (attempt < static_cast<int>(throttled_.size()) && throttled_[attempt]) return "hw_thermal_slowdown in 3 of 10 samples";
    return std::nullopt;
  }

 private:
  std::vector<bool> throttled_;
};

}  // namespace

TEST_CASE("run_gate: one attempt suffices when every verdict is decided") {
  int calls = 0;
  const auto out = run_gate(test::test_config(), two_suite_baseline(), [&](int, const std::vector<std::string>& s) {
    ++calls;
    return attempt_record(s, test::spread(100, 2, 10));
  });
  CHECK(calls == 1);
  CHECK(out.overall == Overall::pass);
  CHECK(out.record.verdicts["overall"] == "pass");
  CHECK(out.record.verdicts["verdicts"].size() == 2);
}

TEST_CASE("run_gate: reruns only the suites that need more samples, pooling samples") {
  std::vector<std::vector<std::string>> asked;
  const auto out = run_gate(test::test_config(), two_suite_baseline(), [&](int attempt, const std::vector<std::string>& s) {
    asked.push_back(s);
    // 3 samples per attempt: below min_samples (5) on the first attempt, enough after pooling;
    // the confirmation run (attempt 2) brings 5 of its own.
    if (attempt == 2) return attempt_record(s, {130, 131, 132, 129, 133});
    return attempt_record(s, attempt == 0 ? std::vector<double>{130, 131, 132} : std::vector<double>{129, 133, 134});
  });
  REQUIRE(asked.size() == 3);
  CHECK(asked[0] == std::vector<std::string>{"ttft", "decode-anatomy"});
  CHECK(asked[1] == std::vector<std::string>{"ttft"});
  CHECK(asked[2] == std::vector<std::string>{"ttft"});  // confirmation of the timed regression
  // Each later attempt names the metrics that asked for it (printed by the gate report).
  CHECK(out.attempts[0].because.empty());
  CHECK(out.attempts[1].because == std::vector<std::string>{"ttft/p50"});
  CHECK(out.attempts[2].because == std::vector<std::string>{"ttft/p50"});
  CHECK(out.attempts[2].confirmation);
  CHECK(out.record.suites.at("ttft").metrics.at("p50").samples.size() == 6);  // not pooled
  CHECK(out.overall == Overall::regression);
}

TEST_CASE("run_gate: a timed regression must reproduce in a fresh confirmation run") {
  // Slow first run (drift on a shared box), normal confirmation: not evidence -> inconclusive.
  std::vector<std::vector<std::string>> asked;
  const auto drift = run_gate(test::test_config(), two_suite_baseline(), [&](int attempt, const std::vector<std::string>& s) {
    asked.push_back(s);
    return attempt_record(s, attempt == 0 ? test::spread(130, 2, 10) : test::spread(100, 2, 10));
  });
  REQUIRE(asked.size() == 2);
  CHECK(asked[1] == std::vector<std::string>{"ttft"});
  CHECK(drift.attempts.back().confirmation);
  CHECK(drift.overall == Overall::inconclusive);
  const Verdict& v = drift.comparison.verdicts.front().key == "ttft/p50" ? drift.comparison.verdicts.front()
                                                                        : drift.comparison.verdicts.back();
  CHECK(v.key == "ttft/p50");
  CHECK(v.status == VerdictStatus::needs_more_samples);
  CHECK(v.why.find("not reproduced") != std::string::npos);

  // Slow both times (a real slowdown, like the planted one): the regression stands.
  const auto real = run_gate(test::test_config(), two_suite_baseline(), [&](int, const std::vector<std::string>& s) {
    return attempt_record(s, test::spread(130, 2, 10));
  });
  CHECK(real.overall == Overall::regression);
  CHECK(real.attempts.size() == 2);
  CHECK(real.record.verdicts["verdicts"].dump().find("confirmation run: regression, median") != std::string::npos);

  // A confirmation too small to decide (2 samples < min_samples) does not excuse the regression.
  const auto small = run_gate(test::test_config(), two_suite_baseline(), [&](int attempt, const std::vector<std::string>& s) {
    return attempt_record(s, attempt == 0 ? test::spread(130, 2, 10) : std::vector<double>{100, 101});
  });
  CHECK(small.overall == Overall::regression);

  // A confirmation run that fails is a failed gate, with its reason.
  const auto crashed = run_gate(test::test_config(), two_suite_baseline(), [&](int attempt, const std::vector<std::string>& s) {
    if (attempt == 0) return attempt_record(s, test::spread(130, 2, 10));
    records::Record r;
    r.valid = false;
    r.invalid_reason = "engine crashed";
    return r;
  });
  CHECK(crashed.overall == Overall::regression);
  CHECK(crashed.reason == "the confirmation run failed: engine crashed");

  // Switched off: one run decides.
  auto cfg = test::test_config();
  cfg.confirm_timed_regressions = false;
  int calls = 0;
  const auto off = run_gate(cfg, two_suite_baseline(), [&](int, const std::vector<std::string>& s) {
    ++calls;
    return attempt_record(s, test::spread(130, 2, 10));
  });
  CHECK(calls == 1);
  CHECK(off.overall == Overall::regression);
}

TEST_CASE("run_gate: gives up after the rerun cap and answers inconclusive") {
  int calls = 0;
  auto cfg = test::test_config();
  cfg.rerun_cap = 2;
  cfg.min_samples = 50;  // never reached at 1 sample per attempt
  const auto out = run_gate(cfg, two_suite_baseline(), [&](int, const std::vector<std::string>& s) {
    ++calls;
    return attempt_record(s, {100});
  });
  CHECK(calls == 3);
  CHECK(out.overall == Overall::inconclusive);
  CHECK(out.reason.find("after 2 reruns") != std::string::npos);
  CHECK(to_int(exit_code(out.overall)) == 2);
}

TEST_CASE("run_gate: throttled attempts are dropped, counted and rerun") {
  FakeGuard guard({true, false});
  int calls = 0;
  const auto out = run_gate(
      test::test_config(), two_suite_baseline(),
      [&](int attempt, const std::vector<std::string>& s) {
        ++calls;
        // The throttled attempt's samples are slow; they must not reach the verdict.
        return attempt_record(s, attempt == 0 ? test::spread(200, 2, 10) : test::spread(100, 2, 10));
      },
      &guard);
  CHECK(calls == 2);
  CHECK(out.dropped_attempts == 1);
  CHECK(out.attempts[0].dropped);
  CHECK(out.overall == Overall::pass);
  CHECK(out.record.verdicts["dropped_attempts"] == 1);

  FakeGuard always({true, true, true});
  const auto all_dropped = run_gate(test::test_config(), two_suite_baseline(),
                                    [&](int, const std::vector<std::string>& s) { return attempt_record(s, {100}); }, &always);
  CHECK(all_dropped.overall == Overall::inconclusive);
  CHECK(all_dropped.reason.find("all 3 attempts were dropped") != std::string::npos);
}

TEST_CASE("run_gate: a failed suite run is a regression with its reason") {
  const auto out = run_gate(test::test_config(), two_suite_baseline(), [&](int, const std::vector<std::string>&) {
    records::Record r;
    r.valid = false;
    r.invalid_reason = "engine crashed in prefill";
    return r;
  });
  CHECK(out.overall == Overall::regression);
  CHECK(out.reason == "the suite run failed: engine crashed in prefill");
}

TEST_CASE("decide: merge-base violations fail; a noisy box downgrades timed verdicts only") {
  GateOutcome pass;
  pass.overall = Overall::pass;
  CHECK(decide(pass, true, true, false).overall == Overall::pass);
  CHECK(decide(pass, false, true, false).overall == Overall::regression);
  CHECK(decide(pass, true, false, false).overall == Overall::inconclusive);
  CHECK(decide(pass, true, false, true).overall == Overall::pass);

  GateOutcome timed_regression;
  Verdict v;
  v.kind = records::MetricKind::timed;
  v.status = VerdictStatus::regression;
  timed_regression.comparison.verdicts = {v};
  timed_regression.overall = Overall::regression;
  CHECK(decide(timed_regression, true, false, false).overall == Overall::inconclusive);
  CHECK(decide(timed_regression, true, true, false).overall == Overall::regression);

  GateOutcome counted_regression = timed_regression;
  counted_regression.comparison.verdicts[0].kind = records::MetricKind::counted;
  CHECK(decide(counted_regression, true, false, false).overall == Overall::regression);
}

TEST_CASE("printers: text table and markdown summary show metric, baseline, candidate, delta, verdict, why") {
  const auto out = run_gate(test::test_config(), two_suite_baseline(), [&](int, const std::vector<std::string>& s) {
    return attempt_record(s, test::spread(120, 2, 10));
  });
  GateReport rep;
  rep.gate = "pr";
  rep.machine_class = "cpu-test";
  rep.baseline_file = "baselines/cpu-test/pr.BASELINE.json";
  rep.commit = "c0ffee";
  rep.comparison = out.comparison;
  rep.decision = decide(out, true, true, false);
  rep.attempts = out.attempts;
  std::ostringstream text, md;
  make_text_printer()->print(rep, text);
  make_markdown_printer()->print(rep, md);
  const std::string t = text.str();
  CHECK(t.find("metric") != std::string::npos);
  CHECK(t.find("ttft/p50") != std::string::npos);
  CHECK(t.find("100 ms") != std::string::npos);
  CHECK(t.find("120 ms") != std::string::npos);
  CHECK(t.find("+20.00%") != std::string::npos);
  CHECK(t.find("regression") != std::string::npos);
  CHECK(t.find("result: regression") != std::string::npos);
  // The confirmation run says which metric asked for it.
  // Numbered from 1, as the progress line ("attempt 2 (rerun or confirmation)") numbers it.
  CHECK(t.find("attempt 2: confirmation run of ttft for the timed regression of ttft/p50") != std::string::npos);
  const std::string m = md.str();
  CHECK(m.find("### atlas-bench gate `pr`: **REGRESSION**") == 0);
  CHECK(m.find("| `ttft/p50` | 100 ms | 120 ms | +20.00% | regression |") != std::string::npos);
  CHECK(m.find("<details><summary>1 metrics unchanged within the noise</summary>") != std::string::npos);
}

TEST_CASE("printers: the text report folds timed metrics a class never stores into one line; judged rows stay") {
  GateReport rep;
  rep.gate = "pr";
  rep.machine_class = "cpu-2c-x86_64";
  rep.baseline_file = "baselines/cpu-2c-x86_64/pr.BASELINE.json";
  for (int i = 0; i < 3; ++i) {
    Verdict v;
    v.key = "ttft/p" + std::to_string(50 + i);
    v.status = VerdictStatus::new_metric;
    v.kind = records::MetricKind::timed;
    v.why = std::string(kUnstoredTimedWhy) + "cpu-2c-x86_64 (not a quiet machine class, ...)";
    rep.comparison.verdicts.push_back(v);
  }
  Verdict counted;
  counted.key = "decode-anatomy/host_syncs_per_token";
  counted.status = VerdictStatus::same;
  counted.kind = records::MetricKind::counted;
  counted.baseline_value = counted.candidate_value = 1.0;
  rep.comparison.verdicts.push_back(counted);
  std::ostringstream text;
  make_text_printer()->print(rep, text);
  const std::string t = text.str();
  INFO(t);
  CHECK(t.find("decode-anatomy/host_syncs_per_token") != std::string::npos);  // judged: its row
  CHECK(t.find("ttft/p51") == std::string::npos);                               // folded: no row
  CHECK(t.find("3 timed metrics reported, not gated on cpu-2c-x86_64 (not a quiet machine class") != std::string::npos);
  CHECK(t.find("e.g. ttft/p50\n") != std::string::npos);
  CHECK(t.find("quiet-box") == std::string::npos);  // a quiet box: nothing said

  // A busy box: the reason, then once what it can and cannot change.
  rep.quiet_box_reasons = {"1-minute load 1.77 on 2 cores = 0.885 per core > 0.5"};
  std::ostringstream busy;
  make_text_printer()->print(rep, busy);
  CHECK(busy.str().find("quiet-box: 1-minute load 1.77 on 2 cores = 0.885 per core > 0.5\nquiet-box: where this class gates "
                        "stored timed values, a busy box makes that judgement inconclusive (exit 2) unless a counted "
                        "metric regressed") != std::string::npos);
}

TEST_CASE("printers: a non-zero change too small for two decimals is not printed as +0.00% (one percent format, atlas::format_percent)") {
  // An instruction count 232,241.2 -> 232,241.4 moves +0.000086 %: "+0.00%" beside a verdict reads
  // as no change at all. The diff printers said so already; the gate's report, its failing-metric
  // line and the trends pages (gates::format_delta_pct) now say the same.
  CHECK(format_delta_pct(8.6e-5) == "+8.6e-05%");
  CHECK(format_delta_pct(0.00043) == "+0.00043%");
  CHECK(format_delta_pct(-0.004) == "-0.004%");
  CHECK(format_delta_pct(0.0) == "+0.00%");
  CHECK(format_delta_pct(20.0) == "+20.00%");
  CHECK(format_delta_pct(std::nullopt) == "-");
  CHECK(format_delta_pct(std::nan("")) == "-");
  Verdict v;
  v.key = "instructions/instructions_per_token";
  v.status = VerdictStatus::regression;
  v.delta_pct = 0.00043;
  CHECK(failing_metrics({v}) == "regression: instructions/instructions_per_token (+0.00043%)");
}
