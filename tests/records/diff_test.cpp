#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "records/diff.hpp"
#include "records/error.hpp"
#include "records/printers/diff_printer.hpp"
#include "tests/records/fixture.hpp"

using atlas::records::Better;
using atlas::records::Change;
using atlas::records::Metric;
using atlas::records::MetricKind;
using atlas::test::counted_metric;
using atlas::test::timed_metric;

namespace {
atlas::records::MetricDiff d(const Metric& a, const Metric& b) {
  return atlas::records::diff_metric("ttft", "m", a, b, {});
}
Metric accuracy(double v) {
  Metric m;
  m.unit = "fraction";
  m.better = Better::higher;
  m.kind = MetricKind::accuracy;
  m.samples = {v};
  return m;
}
}  // namespace

TEST_CASE("timed metrics: significant and large -> regressed/improved honouring `better`") {
  const std::vector<double> a{10.0, 10.1, 10.2, 10.3, 10.4, 10.5, 10.6, 10.7, 10.8, 10.9};
  const std::vector<double> b{12.0, 12.1, 12.2, 12.3, 12.4, 12.5, 12.6, 12.7, 12.8, 12.9};
  auto r = d(timed_metric(a), timed_metric(b));
  CHECK(r.p50_a == doctest::Approx(10.45));
  CHECK(r.p50_b == doctest::Approx(12.45));
  CHECK(r.delta_pct == doctest::Approx(100.0 * 2.0 / 10.45));
  // Complete separation of 10 vs 10 samples: U = 0, asymptotic (both n > 8, no ties).
  CHECK(r.test == "asymptotic");
  CHECK(r.p_value < 0.001);
  CHECK(r.significant);
  CHECK(r.change == Change::regressed);
  r = d(timed_metric(a, "tok/s", Better::higher), timed_metric(b, "tok/s", Better::higher));
  CHECK(r.change == Change::improved);
  r = d(timed_metric(b), timed_metric(a));
  CHECK(r.change == Change::improved);
}

TEST_CASE("timed metrics: large but not significant is noise; small is unchanged") {
  // 3 vs 3 samples: the smallest exact two-sided p is 2/C(6,3) = 0.1 > 0.05.
  auto r = d(timed_metric({10.0, 10.2, 30.0}), timed_metric({11.0, 9.0, 31.0}));
  CHECK(r.delta_pct == doctest::Approx(100.0 * 0.8 / 10.2));
  CHECK(r.test == "exact");
  CHECK(r.p_value >= 0.1);
  CHECK(r.change == Change::noise);
  // Significant but only +1 %: below the 5 % threshold.
  std::vector<double> a, b;
  for (int i = 0; i < 20; ++i) {
    a.push_back(100.0 + i * 0.01);
    b.push_back(101.0 + i * 0.01);
  }
  r = d(timed_metric(a), timed_metric(b));
  CHECK(r.significant);
  CHECK(r.change == Change::unchanged);
  // Single samples: no test, the threshold alone decides (asv).
  r = d(timed_metric({10.0}), timed_metric({12.0}));
  CHECK(r.test == "none");
  CHECK(std::isnan(r.p_value));
  CHECK(r.change == Change::regressed);
}

TEST_CASE("counted and accuracy metrics compare exactly") {
  CHECK(d(counted_metric({42, 42, 42}), counted_metric({42, 42, 42})).change == Change::unchanged);
  auto r = d(counted_metric({42, 42, 42}), counted_metric({43, 43, 43}));
  CHECK(r.change == Change::regressed);
  CHECK(r.test == "exact-compare");
  CHECK(r.delta_pct == doctest::Approx(100.0 / 42.0));
  CHECK(d(counted_metric({42}), counted_metric({41})).change == Change::improved);
  CHECK(d(accuracy(0.80), accuracy(0.85)).change == Change::improved);
  CHECK(d(accuracy(0.80), accuracy(0.79)).change == Change::regressed);
  // From zero: the percentage is undefined but the change is still a regression.
  r = d(counted_metric({0}), counted_metric({1}));
  CHECK(std::isnan(r.delta_pct));
  CHECK(r.change == Change::regressed);
}

TEST_CASE("record diff: added, removed, incomparable, sorted rows, counts") {
  auto a = atlas::test::sample_record();
  auto b = atlas::test::sample_record();
  b.suites["ttft"].metrics.erase("launches_per_token");
  b.suites["ttft"].metrics["itl_ms"] = timed_metric({1, 2, 3});
  b.suites["bfcl"].name = "bfcl";
  b.suites["bfcl"].metrics["accuracy"] = accuracy(0.5);
  auto& ttft_b = b.suites["ttft"].metrics["ttft_ms"];
  ttft_b.unit = "us";
  const auto diff = atlas::records::diff_records(a, b, {}, "a.json", "b.json");
  REQUIRE(diff.metrics.size() == 4);
  CHECK(diff.metrics[0].suite == "bfcl");
  CHECK(diff.metrics[0].change == Change::added);
  CHECK(diff.metrics[1].metric == "itl_ms");
  CHECK(diff.metrics[1].change == Change::added);
  CHECK(diff.metrics[1].n_b == 3);
  CHECK(diff.metrics[2].metric == "launches_per_token");
  CHECK(diff.metrics[2].change == Change::removed);
  CHECK(diff.metrics[2].p50_a == 42.0);
  CHECK(diff.metrics[3].metric == "ttft_ms");
  CHECK(diff.metrics[3].change == Change::incomparable);
  CHECK(diff.count(Change::added) == 2);
  CHECK(diff.a.label == "a.json");
  CHECK_THROWS_AS(atlas::records::diff_records(a, b, {.alpha = 0.0, .judge = {}, .rule_text = {}}), atlas::records::RecordError);
}

TEST_CASE("diff printers: text, md, json") {
  auto a = atlas::test::sample_record();
  auto b = atlas::test::sample_record();
  b.git.commit = "bbbbbbbbbbbbcccccccccccccccccccccccccccc";
  b.git.dirty = true;
  b.suites["ttft"].metrics["launches_per_token"] = counted_metric({40, 40, 40});
  const auto diff = atlas::records::diff_records(a, b, {}, "a.json", "b.json");

  std::ostringstream text;
  atlas::records::make_diff_printer("text")->print(diff, text);
  const std::string t = text.str();
  CHECK(t.find("A: a.json\n   3f9a0c12b4de (records)  cpu-2c-x86_64  pr  2026-11-29T14:33:20Z\n") == 0);
  CHECK(t.find("B: b.json\n   bbbbbbbbbbbb-dirty (records)") != std::string::npos);
  CHECK(t.find("suite  metric              unit   A p50  B p50   delta  p  n A/B  change") != std::string::npos);
  CHECK(t.find("ttft   launches_per_token  count     42     40  -4.76%  -    3/3  improved") != std::string::npos);
  CHECK(t.find("summary: 1 improved, 1 unchanged") != std::string::npos);

  std::ostringstream md;
  atlas::records::make_diff_printer("md")->print(diff, md);
  CHECK(md.str().find("| ttft | launches_per_token | count | 42 | 40 | -4.76% | - | 3/3 | **improved** |") !=
        std::string::npos);
  CHECK(md.str().find("|---|---|---|--:|--:|--:|--:|--:|---|") != std::string::npos);

  std::ostringstream js;
  atlas::records::make_diff_printer("json")->print(diff, js);
  const auto j = nlohmann::json::parse(js.str());
  CHECK(j["a"]["commit"] == "3f9a0c12b4de5f60718293a4b5c6d7e8f9012345");
  CHECK(j["b"]["dirty"] == true);
  REQUIRE(j["metrics"].size() == 2);
  CHECK(j["metrics"][0]["metric"] == "launches_per_token");
  CHECK(j["metrics"][0]["change"] == "improved");
  CHECK(j["metrics"][0]["p_value"].is_null());
  CHECK(j["metrics"][1]["metric"] == "ttft_ms");
  CHECK(j["metrics"][1]["change"] == "unchanged");
  CHECK(j["metrics"][1]["p_value"].get<double>() == doctest::Approx(1.0));
  CHECK(j["counts"]["improved"] == 1);
  CHECK(j["options"]["alpha"] == 0.05);

  CHECK_THROWS_WITH_AS(atlas::records::make_diff_printer("csv"), doctest::Contains("\"csv\""), atlas::records::RecordError);
  {  // "markdown", as `run --format` spells it, is the same printer as "md"
    std::ostringstream a, b;
    atlas::records::make_diff_printer("md")->print(diff, a);
    atlas::records::make_diff_printer("markdown")->print(diff, b);
    CHECK(a.str() == b.str());
  }
}

TEST_CASE("diff warns about a side made with a test hook, an unchecked box, and A == B; every printer shows it") {
  atlas::records::Record a, b;
  a.suites["ttft"].metrics["m"] = timed_metric({1, 2, 3});
  b.suites["ttft"].metrics["m"] = timed_metric({1, 2, 3});
  a.quiet_box = {{"before", {{"quiet", true}}}};
  b.quiet_box = {{"before", {{"quiet", true}}}};
  b.config["target"] = {{"options", {{"backend", {{"inject_decode_delay_us", 300}}}}}};
  auto r = atlas::records::diff_records(a, b, {}, "a.json", "b.json");
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0] == "B was made with a test hook active (inject_decode_delay_us=300)");
  b.config = nlohmann::json::object();
  b.quiet_box = nullptr;
  r = atlas::records::diff_records(a, b, {}, "same.json", "same.json");
  REQUIRE(r.warnings.size() == 2);
  CHECK(r.warnings[0].rfind("B was not quiet-box checked", 0) == 0);
  CHECK(r.warnings[1] == "A and B are the same record (same.json)");
  for (const char* format : {"text", "md", "json"}) {
    std::ostringstream out;
    atlas::records::make_diff_printer(format)->print(r, out);
    CHECK_MESSAGE(out.str().find("A and B are the same record") != std::string::npos, format);
  }
}

TEST_CASE("an output fingerprint that changes is 'changed', not improved or regressed, and prints in hex") {
  // Two hashes %.6g would print alike (8.50624e+08): the printers must show them apart.
  Metric fa = counted_metric({850623738, 850623738});
  fa.unit = "fnv1a32";
  Metric fb = fa;
  fb.samples = {850623739, 850623739};
  const auto r = d(fa, fb);
  CHECK(r.change == Change::changed);  // "lower is better" in the record must not make it "improved"
  CHECK(std::isnan(r.delta_pct));
  CHECK(d(fa, fa).change == Change::unchanged);

  auto a = atlas::test::sample_record();
  auto b = atlas::test::sample_record();
  a.suites["ttft"].metrics["output_fingerprint"] = fa;
  b.suites["ttft"].metrics["output_fingerprint"] = fb;
  const auto diff = atlas::records::diff_records(a, b);
  CHECK(diff.count(Change::changed) == 1);
  std::ostringstream text, md, js;
  atlas::records::make_diff_printer("text")->print(diff, text);
  atlas::records::make_diff_printer("md")->print(diff, md);
  atlas::records::make_diff_printer("json")->print(diff, js);
  CHECK(text.str().find("output_fingerprint  fnv1a32  0x32b37cfa  0x32b37cfb       -  -    2/2  changed") != std::string::npos);
  CHECK(text.str().find("summary: 1 changed,") != std::string::npos);
  CHECK(md.str().find("| ttft | output_fingerprint | fnv1a32 | 0x32b37cfa | 0x32b37cfb | - | - | 2/2 | **changed** |") !=
        std::string::npos);
  const auto j = nlohmann::json::parse(js.str());
  CHECK(j["counts"]["changed"] == 1);
}

TEST_CASE("an identity whose runs disagree is 'changed' and 'mixed', even when the medians match") {
  Metric fa = counted_metric({850623738, 850623738, 850623738});
  fa.unit = "fnv1a32";
  Metric fb = fa;
  fb.samples = {850623738, 850623738, 12345};  // median unchanged; one run's output differs
  const auto r = d(fa, fb);
  CHECK(r.change == Change::changed);
  CHECK(!r.mixed_a);
  CHECK(r.mixed_b);
  auto a = atlas::test::sample_record();
  auto b = atlas::test::sample_record();
  a.suites["ttft"].metrics["output_fingerprint"] = fa;
  b.suites["ttft"].metrics["output_fingerprint"] = fb;
  std::ostringstream text;
  atlas::records::make_diff_printer("text")->print(atlas::records::diff_records(a, b), text);
  CHECK(text.str().find("output_fingerprint  fnv1a32  0x32b37cfa  mixed") != std::string::npos);
}

TEST_CASE("identity_hex: 8 hex digits up to 2^32, 16 above, '-' for NaN") {
  CHECK(atlas::records::identity_hex(12345, "fnv1a64") == "0x0000000000003039");  // width from a 64-bit unit
  CHECK(atlas::records::identity_hex(-1) == "-1");                                // no hash: decimal, no UB cast
  CHECK(atlas::records::identity_hex(1e30) == "1e+30");
  CHECK(atlas::records::identity_value({3, 3}) == 3.0);
  CHECK(!atlas::records::identity_value({3, 4}).has_value());
  CHECK(!atlas::records::identity_value({}).has_value());
  CHECK(atlas::records::identity_hex(850623738) == "0x32b37cfa");
  CHECK(atlas::records::identity_hex(0) == "0x00000000");
  CHECK(atlas::records::identity_hex(4294967296.0) == "0x0000000100000000");
  CHECK(atlas::records::identity_hex(std::nan("")) == "-");
  CHECK(atlas::records::is_identity_unit("fnv1a32"));
  CHECK(!atlas::records::is_identity_unit("count"));
}

TEST_CASE("a side whose box was not quiet is named at the top and on every timed row, not on counted ones") {
  atlas::records::Record a, b;
  for (auto* r : {&a, &b}) {
    r->suites["ttft"].metrics["ttft_ms"] = timed_metric({10, 10.1, 10.2, 10.3, 10.4, 10.5});
    r->suites["ttft"].metrics["launches_per_token"] = counted_metric({42});
    r->quiet_box = {{"before", {{"quiet", true}, {"reasons", nlohmann::json::array()}}}, {"allow_noisy", false}};
  }
  auto r = atlas::records::diff_records(a, b, {}, "a.json", "b.json");
  CHECK(r.warnings.empty());
  for (const auto& m : r.metrics) CHECK(m.caveat.empty());
  b.quiet_box["before"] = {{"quiet", false}, {"reasons", {"1-minute load 6.1 on 2 cores = 3.05 per core > 0.6"}}};
  r = atlas::records::diff_records(a, b, {}, "a.json", "b.json");
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].rfind("B's box was NOT quiet: its quiet-box check said not quiet (1-minute load 6.1", 0) == 0);
  for (const auto& m : r.metrics) {
    CAPTURE(m.metric);
    CHECK(m.caveat == (m.kind == MetricKind::timed ? "B: box not quiet" : ""));
  }
  // --allow-noisy records are not quiet either; a record never checked is said so.
  b.quiet_box = {{"before", {{"quiet", true}}}, {"allow_noisy", true}};
  CHECK(atlas::records::box_caveat(b) == "judged with --allow-noisy");
  a.quiet_box = nullptr;
  r = atlas::records::diff_records(a, b, {}, "a.json", "b.json");
  CHECK(r.metrics[1].metric == "ttft_ms");
  CHECK(r.metrics[1].caveat == "A: box not checked; B: box not quiet");
  std::ostringstream text;
  atlas::records::make_diff_printer("text")->print(r, text);
  CHECK(text.str().find("[A: box not checked; B: box not quiet]") != std::string::npos);
}

TEST_CASE("diff rows sort numbers in names by value: a load sweep reads 20, 80, 200") {
  atlas::records::Record a;
  for (const char* level : {"rate=20", "rate=200", "rate=80", "rate=0.5", "rate=0.25"})
    a.suites["load"].metrics[std::string(level) + "/ttft_ms"] = timed_metric({1, 2, 3});
  const auto r = atlas::records::diff_records(a, a, {});
  REQUIRE(r.metrics.size() == 5);
  CHECK(r.metrics[0].metric == "rate=0.25/ttft_ms");
  CHECK(r.metrics[1].metric == "rate=0.5/ttft_ms");
  CHECK(r.metrics[2].metric == "rate=20/ttft_ms");
  CHECK(r.metrics[3].metric == "rate=80/ttft_ms");
  CHECK(r.metrics[4].metric == "rate=200/ttft_ms");
}

TEST_CASE("a change too small for two decimals is not printed as +0.00%") {
  Metric a = counted_metric({232241.2}), b = counted_metric({232241.4});
  auto m = d(a, b);
  atlas::records::RecordDiff r;
  r.metrics.push_back(m);
  std::ostringstream text;
  atlas::records::make_diff_printer("text")->print(r, text);
  CHECK(text.str().find("+8.6e-05%") != std::string::npos);
  CHECK(text.str().find("+0.00%") == std::string::npos);
}

TEST_CASE("diff --format md: a hostile metric name cannot link, mention or embed HTML in the PR comment") {
  auto a = atlas::test::sample_record();
  auto b = atlas::test::sample_record();
  const std::string name = "x[click](https://evil.example)@org/team<img src=x onerror=alert(1)>www.evil.example|y";
  a.suites["ttft"].metrics[name] = counted_metric({1, 1, 1});
  b.suites["ttft"].metrics[name] = counted_metric({2, 2, 2});
  const auto diff = atlas::records::diff_records(a, b, {}, "a.json", "b`.json");
  std::ostringstream md;
  atlas::records::make_diff_printer("md")->print(diff, md);
  const std::string m = md.str();
  INFO(m);
  CHECK(m.find("| ttft | x&#91;click&#93;(https&#58;//evil.example)&#64;org/team&lt;img src=x onerror=alert(1)&gt;www&#46;"
               "evil.example\\|y | count |") != std::string::npos);
  CHECK(m.find("<img") == std::string::npos);
  CHECK(m.find("](") == std::string::npos);
  CHECK(m.find("@org") == std::string::npos);
  CHECK(m.find("| B | ``b`.json`` |") != std::string::npos);  // a backtick in a label cannot close the code span
}
