// The gate's counted judgement merged into its outcome (runs/counted_base.hpp): against the
// merge-base when it was counted, else against stored counts made on this CPU, else reported
// only; a failed base side is inconclusive, a CPU without stored counts never an error.
#include <doctest/doctest.h>

#include "gates/counted_vs_base.hpp"
#include "gates/ratchet.hpp"
#include "runs/counted_base.hpp"
#include "tests/gates/gate_fixtures.hpp"

using namespace atlas;
using namespace atlas::gates;
using records::MetricKind;

namespace {

records::Record head_record(double per_token, const std::string& cpu) {
  auto r = test::record_with("instructions", "instructions_per_decode_token",
                             test::metric({per_token}, MetricKind::counted, records::Better::lower, "instructions"));
  r.suites["instructions"].config = {{"decode_tokens", 64}, {"counted_on", {{"cpu_model", cpu}, {"cpu_flags_sha256", "00aa"}, {"valgrind", "3.19"}}}};
  r.suites["ttft"].name = "ttft";
  r.suites["ttft"].metrics["prompt_tokens"] = test::metric({64}, MetricKind::counted, records::Better::lower, "tokens");
  return r;
}

GateConfig cfg() {
  GateConfig c = test::test_config();
  c.metric_tolerance["instructions/"] = Tolerance{0.005, 0.0};
  return c;
}

GateOutcome outcome_of(const records::Record& head) {
  GateOutcome o;
  o.record = head;
  Verdict ttft;
  ttft.key = "ttft/prompt_tokens";
  ttft.status = VerdictStatus::same;
  o.comparison.verdicts = {ttft};
  return o;
}

const Verdict* row(const GateOutcome& o, const std::string& key) {
  for (const auto& v : o.comparison.verdicts)
    if (v.key == key) return &v;
  return nullptr;
}

}  // namespace

TEST_CASE("counted: judged against the merge-base; stored counts from another CPU are a note, never an error") {
  const auto head = head_record(234843.1875, "AMD EPYC");  // +5 % over the base below
  runs::CountedBaseReport counted;
  counted.ran = true;
  counted.base_commit = "0123456789abcdef";
  counted.comparison = compare_counted_with_base(head, head_record(223586.625, "AMD EPYC"), cfg(), counted.base_commit);
  const Baseline stored = init_baseline(head_record(200000, "Intel Xeon"), cfg(), "cpu-test", {"abc", "2026-12-01T00:00:00Z"}, "init");
  GateOutcome o = outcome_of(head);
  const auto notes = runs::merge_counted_verdicts(o, counted, &stored, cfg());
  const Verdict* v = row(o, "instructions/instructions_per_decode_token");
  REQUIRE(v != nullptr);
  CHECK(v->status == VerdictStatus::regression);
  CHECK(v->why.find("vs merge-base 0123456789ab") == 0);
  CHECK(o.overall == Overall::regression);
  REQUIRE(notes.size() == 2);
  CHECK(notes[0].find("judged against the merge-base 0123456789ab, counted on this CPU in this job (AMD EPYC") != std::string::npos);
  CHECK(notes[1].find("made on Intel Xeon") != std::string::npos);
  CHECK(notes[1].find("not compared on this CPU") != std::string::npos);
}

TEST_CASE("counted: no merge-base and no stored counts for this CPU: reported, not gated, pass") {
  runs::CountedBaseReport counted;
  counted.skipped_reason = "no merge-base to build (not inside a git checkout)";
  GateOutcome o = outcome_of(head_record(223586.625, "AMD EPYC"));
  const Baseline stored = init_baseline(head_record(200000, "Intel Xeon"), cfg(), "cpu-test", {"abc", "2026-12-01T00:00:00Z"}, "init");
  const auto notes = runs::merge_counted_verdicts(o, counted, &stored, cfg());
  CHECK(row(o, "instructions/instructions_per_decode_token")->status == VerdictStatus::new_metric);
  CHECK(o.overall == Overall::pass);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("not judged") != std::string::npos);
  CHECK(notes[0].find("stored counts were made on Intel Xeon") != std::string::npos);
  // Without any stored counts either: still a pass.
  GateOutcome p = outcome_of(head_record(223586.625, "AMD EPYC"));
  runs::merge_counted_verdicts(p, counted, nullptr, cfg());
  CHECK(p.overall == Overall::pass);
}

TEST_CASE("counted: the merge-base not counted, stored counts made on this CPU: judged against them") {
  runs::CountedBaseReport counted;
  counted.skipped_reason = "no merge-base to build";
  const Baseline stored = init_baseline(head_record(223586.625, "AMD EPYC"), cfg(), "cpu-test", {"abc", "2026-12-01T00:00:00Z"}, "init");
  GateOutcome o = outcome_of(head_record(234843.1875, "AMD EPYC"));
  runs::merge_counted_verdicts(o, counted, &stored, cfg());
  CHECK(row(o, "instructions/instructions_per_decode_token")->status == VerdictStatus::regression);
  CHECK(o.overall == Overall::regression);
}

TEST_CASE("counted: a merge-base that failed to build or count is inconclusive with the reason") {
  runs::CountedBaseReport counted;
  counted.skipped_reason = "the merge-base's instructions run exited 3: boom";
  counted.skipped_is_failure = true;
  GateOutcome o = outcome_of(head_record(223586.625, "AMD EPYC"));
  runs::merge_counted_verdicts(o, counted, nullptr, cfg());
  const Verdict* v = row(o, "instructions/(merge-base counts)");
  REQUIRE(v != nullptr);
  CHECK(v->status == VerdictStatus::needs_more_samples);
  CHECK(v->why.find("exited 3: boom") != std::string::npos);
  CHECK(o.overall == Overall::inconclusive);
}
