// The pull-request summary lists every change beyond the noise, whatever its verdict: a -71%
// change that a tolerance lets pass was folded into "88 unchanged metrics".
#include <doctest/doctest.h>

#include <sstream>

#include "gates/printers/gate_printer.hpp"

using namespace atlas::gates;

namespace {
Verdict verdict(std::string key, double base, double cand, std::optional<double> noise) {
  Verdict v;
  v.key = std::move(key);
  v.unit = "ms";
  v.status = VerdictStatus::same;
  v.baseline_value = base;
  v.candidate_value = cand;
  v.delta_pct = 100.0 * (cand - base) / base;
  v.noise = noise;
  v.why = "within the tolerance";
  return v;
}
}  // namespace

TEST_CASE("markdown summary: a 'same' verdict whose change exceeds the noise is in the table, not folded") {
  GateReport rep;
  rep.gate = "pr";
  rep.machine_class = "cpu-test";
  rep.comparison.verdicts = {verdict("ttft/big_drop", 100, 29, 2.0), verdict("ttft/steady", 100, 101, 2.0),
                             verdict("decode-anatomy/launches", 10, 10, std::nullopt)};
  std::ostringstream md;
  make_markdown_printer()->print(rep, md);
  const std::string m = md.str();
  INFO(m);
  const auto details = m.find("<details>");
  REQUIRE(details != std::string::npos);
  const auto drop = m.find("| `ttft/big_drop` | 100 ms | 29 ms | -71.00% | same |");
  REQUIRE(drop != std::string::npos);
  CHECK(drop < details);  // in the main table
  CHECK(m.find("`ttft/steady`") > details);  // within the noise: folded
  CHECK(m.find("`decode-anatomy/launches`") > details);
  CHECK(m.find("<details><summary>2 metrics unchanged within the noise</summary>") != std::string::npos);
}

TEST_CASE("markdown summary: regressions first; 'new' rows folded on their own after the judged table") {
  GateReport rep;
  rep.gate = "pr";
  rep.machine_class = "cpu-test";
  std::vector<Verdict> vs;
  for (const char* k : {"agentic/a", "agentic/b", "bfcl/c"}) {
    Verdict n = verdict(k, 1, 1, std::nullopt);
    n.status = VerdictStatus::new_metric;
    n.baseline_value.reset();
    vs.push_back(n);
  }
  Verdict up = verdict("decode-anatomy/launches", 10, 9, std::nullopt);
  up.status = VerdictStatus::improved;
  vs.push_back(up);
  Verdict reg = verdict("instructions/instructions_per_decode_token", 100, 105, std::nullopt);
  reg.status = VerdictStatus::regression;
  vs.push_back(reg);
  rep.comparison.verdicts = vs;  // sorted by key, as compare() returns them: the regression last
  std::ostringstream md;
  make_markdown_printer()->print(rep, md);
  const std::string m = md.str();
  INFO(m);
  const auto r = m.find("`instructions/instructions_per_decode_token`");
  REQUIRE(r != std::string::npos);
  CHECK(r < m.find("`decode-anatomy/launches`"));  // regressions before improvements
  const auto fold = m.find("<details><summary>3 metrics not in the baseline (reported, not gated)</summary>");
  REQUIRE(fold != std::string::npos);
  CHECK(r < fold);
  CHECK(m.find("`agentic/a`") > fold);
  CHECK(m.find("`agentic/a`") < m.find("`bfcl/c`"));
}

TEST_CASE("markdown summary: every BASELINE change since the merge-base is listed, names escaped") {
  GateReport rep;
  rep.gate = "pr";
  rep.machine_class = "cpu-test";
  MergeBaseReport mb;
  mb.ran = true;
  mb.base_commit = "0123456789abcdef";
  mb.target = "main";
  mb.changes = {"baselines/cpu-test/pr.BASELINE.json ttft/p50: accept 100.0 -> 120.0 (feature d): \"@team see <b>x</b>\""};
  rep.merge_base = mb;
  std::ostringstream md;
  make_markdown_printer()->print(rep, md);
  const std::string m = md.str();
  INFO(m);
  CHECK(m.find("**BASELINE changes since the merge-base** (`0123456789ab`):\n\n- baselines/cpu-test/pr.BASELINE.json "
               "ttft/p50: accept 100.0 -&gt; 120.0 (feature d): \"&#64;team see &lt;b&gt;x&lt;/b&gt;\"\n") !=
        std::string::npos);
}
