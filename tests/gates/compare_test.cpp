#include <doctest/doctest.h>

#include "gates/compare.hpp"
#include "gates/report.hpp"
#include "tests/gates/gate_fixtures.hpp"

using namespace atlas;
using namespace atlas::gates;
using records::Better;
using records::MetricKind;

namespace {
CompareSettings settings() { return {}; }
}  // namespace

TEST_CASE("counted metric: any worsening is a regression, any improvement is improved") {
  const auto b = test::baseline_metric(10, {10, 10, 10}, MetricKind::counted, Better::lower, {0, 0}, "count");
  auto worse = test::metric({11, 11, 11}, MetricKind::counted, Better::lower, "count");
  auto v = judge_metric("decode-anatomy/launches_per_token", &b, &worse, settings());
  CHECK(v.status == VerdictStatus::regression);
  CHECK(v.rule == "exact");
  CHECK(*v.candidate_value == 11);
  CHECK(*v.delta_pct == doctest::Approx(10.0));
  auto better = test::metric({9}, MetricKind::counted, Better::lower, "count");
  CHECK(judge_metric("k/m", &b, &better, settings()).status == VerdictStatus::improved);
  auto same = test::metric({10}, MetricKind::counted, Better::lower, "count");
  CHECK(judge_metric("k/m", &b, &same, settings()).status == VerdictStatus::same);
}

TEST_CASE("counted metric with a tolerance (instruction counts): only a change beyond it counts") {
  // 0.5 % of 400,000 instructions per token = 2,000.
  const auto b = test::baseline_metric(400000, {400000}, MetricKind::counted, Better::lower, {0.005, 0}, "instructions");
  auto within = test::metric({401500}, MetricKind::counted, Better::lower, "instructions");
  auto v = judge_metric("instructions/instructions_per_decode_token", &b, &within, settings());
  CHECK(v.status == VerdictStatus::same);
  CHECK(v.rule == "exact-tolerance");
  CHECK(*v.margin == doctest::Approx(2000));
  auto beyond = test::metric({402500}, MetricKind::counted, Better::lower, "instructions");
  v = judge_metric("instructions/instructions_per_decode_token", &b, &beyond, settings());
  CHECK(v.status == VerdictStatus::regression);
  CHECK(v.why.find("beyond the tolerance 2000 instructions") != std::string::npos);
  auto better = test::metric({397000}, MetricKind::counted, Better::lower, "instructions");
  CHECK(judge_metric("k/m", &b, &better, settings()).status == VerdictStatus::improved);
  auto slightly_better = test::metric({399000}, MetricKind::counted, Better::lower, "instructions");
  CHECK(judge_metric("k/m", &b, &slightly_better, settings()).status == VerdictStatus::same);
}

TEST_CASE("accuracy metric (higher is better) regresses on any drop") {
  const auto b = test::baseline_metric(0.75, {0.75}, MetricKind::accuracy, Better::higher, {0, 0}, "fraction");
  auto drop = test::metric({0.74}, MetricKind::accuracy, Better::higher, "fraction");
  CHECK(judge_metric("bfcl/accuracy", &b, &drop, settings()).status == VerdictStatus::regression);
  auto rise = test::metric({0.80}, MetricKind::accuracy, Better::higher, "fraction");
  CHECK(judge_metric("bfcl/accuracy", &b, &rise, settings()).status == VerdictStatus::improved);
}

TEST_CASE("timed metric: clearly slower and significant is a regression with MWU p-value") {
  const auto base_samples = test::spread(100, 2, 10);  // 99.1 .. 100.9
  const auto b = test::baseline_metric(100, base_samples);
  auto slow = test::metric(test::spread(120, 2, 10));
  const auto v = judge_metric("ttft/ttft_p50_ms", &b, &slow, settings());
  CHECK(v.status == VerdictStatus::regression);
  CHECK(v.rule == "mann-whitney-u");
  REQUIRE(v.p_value);
  CHECK(*v.p_value < 0.01);
  CHECK(*v.candidate_value == doctest::Approx(120));
  CHECK(*v.delta_pct == doctest::Approx(20));
  CHECK(*v.margin == doctest::Approx(5));  // 5 % of 100 exceeds the noise (< 1 ms here)
  CHECK(v.why.find("p=") != std::string::npos);
}

TEST_CASE("timed metric: worse but within the relative tolerance is same even when significant") {
  const auto b = test::baseline_metric(100, test::spread(100, 1, 10));
  auto slightly = test::metric(test::spread(103, 1, 10));  // +3 % < 5 %
  const auto v = judge_metric("ttft/ttft_p50_ms", &b, &slightly, settings());
  CHECK(v.status == VerdictStatus::same);
  CHECK(*v.p_value < 0.01);
}

TEST_CASE("timed metric: absolute floor keeps tiny values from flapping") {
  // 0.010 ms -> 0.013 ms is +30 %, but the absolute floor is 0.005 ms.
  const auto b = test::baseline_metric(0.010, test::spread(0.010, 0.0005, 10), MetricKind::timed, Better::lower, {0.05, 0.005});
  auto c = test::metric(test::spread(0.013, 0.0005, 10));
  const auto v = judge_metric("decode-anatomy/host_overhead_ms", &b, &c, settings());
  CHECK(v.status == VerdictStatus::same);
  CHECK(*v.margin == doctest::Approx(0.005));
  const auto b_no_floor = test::baseline_metric(0.010, test::spread(0.010, 0.0005, 10));
  CHECK(judge_metric("k/m", &b_no_floor, &c, settings()).status == VerdictStatus::regression);
}

TEST_CASE("timed metric: measured noise widens the margin beyond the tolerance") {
  // Baseline samples 60..140 (median 100): the bootstrap CI of the median is wide, so a +8 %
  // median shift is inside the noise although it exceeds the 5 % tolerance.
  std::vector<double> noisy = {60, 70, 80, 90, 100, 100, 110, 120, 130, 140};
  const auto b = test::baseline_metric(100, noisy);
  std::vector<double> shifted;
  for (double x : noisy) shifted.push_back(x + 8);
  auto c = test::metric(shifted);
  const auto v = judge_metric("ttft/ttft_p50_ms", &b, &c, settings());
  REQUIRE(v.noise);
  CHECK(*v.noise > 5);
  CHECK(*v.margin == doctest::Approx(*v.noise));
  CHECK(v.status == VerdictStatus::same);
  CHECK(*v.noise == doctest::Approx(median_ci_half_width(noisy, settings()) > median_ci_half_width(shifted, settings())
                                         ? median_ci_half_width(noisy, settings())
                                         : median_ci_half_width(shifted, settings())));
}

TEST_CASE("timed metric: worse beyond margin but not significant needs more samples") {
  // Overlapping 5-sample sets: the median is 3 ms worse, beyond the noise margin (2 ms: the
  // bootstrap CI of a 5-sample median spans min..max here), but the U test gives p ~ 0.03.
  const auto b = test::baseline_metric(102, {100, 101, 102, 103, 104}, MetricKind::timed, Better::lower, {0, 0});
  auto c = test::metric({103, 104, 105, 106, 107});
  const auto v = judge_metric("ttft/ttft_p50_ms", &b, &c, settings());
  CHECK(v.status == VerdictStatus::needs_more_samples);
  CHECK(v.rule == "mann-whitney-u");
  CHECK(*v.margin == doctest::Approx(2));
  CHECK(*v.p_value >= 0.01);
  CHECK(*v.p_value < 0.1);
}

TEST_CASE("timed metric: too few candidate samples is inconclusive (needs more samples)") {
  const auto b = test::baseline_metric(100, test::spread(100, 1, 10));
  auto c = test::metric({200, 200, 200});
  const auto v = judge_metric("ttft/ttft_p50_ms", &b, &c, settings());
  CHECK(v.status == VerdictStatus::needs_more_samples);
  CHECK(v.rule == "min-samples");
  CHECK(overall_of({v}) == Overall::inconclusive);
  CHECK(exit_code(Overall::inconclusive) == ExitCode::inconclusive);
}

TEST_CASE("timed metric: identical samples mean no change") {
  const std::vector<double> s = {5, 5, 5, 5, 5, 5};
  const auto b = test::baseline_metric(5, s);
  auto c = test::metric({5, 5, 5, 5, 5, 5});
  const auto v = judge_metric("k/m", &b, &c, settings());
  CHECK(v.status == VerdictStatus::same);
  CHECK(v.rule == "identical-samples");
}

TEST_CASE("timed metric: faster and significant is improved; higher-is-better throughput") {
  const auto b = test::baseline_metric(100, test::spread(100, 2, 10));
  auto fast = test::metric(test::spread(80, 2, 10));
  CHECK(judge_metric("k/m", &b, &fast, settings()).status == VerdictStatus::improved);
  const auto tput = test::baseline_metric(500, test::spread(500, 4, 10), MetricKind::timed, Better::higher, {0.05, 0}, "tok/s");
  auto lower_tput = test::metric(test::spread(400, 4, 10), MetricKind::timed, Better::higher, "tok/s");
  CHECK(judge_metric("ttft/decode_tok_s", &tput, &lower_tput, settings()).status == VerdictStatus::regression);
}

TEST_CASE("timed metric: a baseline without samples is judged on the margin alone") {
  const auto b = test::baseline_metric(100, {});
  auto c = test::metric(test::spread(120, 1, 6));
  const auto v = judge_metric("k/m", &b, &c, settings());
  CHECK(v.status == VerdictStatus::regression);
  CHECK(v.rule == "margin-only");
  CHECK(!v.p_value);
}

TEST_CASE("compare: new, missing and incomparable metrics; overall and exit codes") {
  gates::Baseline b = test::baseline_with("ttft/a", test::baseline_metric(1, {1}, MetricKind::counted, Better::lower, {}, "count"));
  b.metrics["ttft/gone"] = test::baseline_metric(1, {1}, MetricKind::counted, Better::lower, {}, "count");
  auto r = test::record_with("ttft", "a", test::metric({1}, MetricKind::counted, Better::lower, "count"));
  r.suites["ttft"].metrics["fresh"] = test::metric({3}, MetricKind::counted, Better::lower, "count");
  const auto c = compare(b, r, settings());
  REQUIRE(c.verdicts.size() == 3);
  CHECK(c.verdicts[0].key == "ttft/a");
  CHECK(c.verdicts[0].status == VerdictStatus::same);
  CHECK(c.verdicts[1].key == "ttft/fresh");
  CHECK(c.verdicts[1].status == VerdictStatus::new_metric);
  CHECK(c.verdicts[2].key == "ttft/gone");
  CHECK(c.verdicts[2].status == VerdictStatus::missing);
  CHECK(c.overall == Overall::regression);
  CHECK(to_int(exit_code(c.overall)) == 1);

  b.metrics.erase("ttft/gone");
  b.metrics["ttft/a"].unit = "ms";
  const auto c2 = compare(b, r, settings());
  CHECK(c2.verdicts[0].status == VerdictStatus::incomparable);
  b.metrics["ttft/a"].unit = "count";
  CHECK(compare(b, r, settings()).overall == Overall::pass);
}

TEST_CASE("verdict JSON carries baseline, candidate, delta, rule, margin, noise, p-value and why") {
  const auto b = test::baseline_metric(100, test::spread(100, 2, 10));
  auto slow = test::metric(test::spread(120, 2, 10));
  const auto j = to_json(judge_metric("ttft/ttft_p50_ms", &b, &slow, settings()));
  CHECK(j["verdict"] == "regression");
  CHECK(j["baseline"].get<double>() == 100);
  CHECK(j["candidate"].get<double>() == doctest::Approx(120));
  CHECK(j["delta_pct"].get<double>() == doctest::Approx(20));
  CHECK(j["rule"] == "mann-whitney-u");
  CHECK(j["margin"].is_number());
  CHECK(j["noise"].is_number());
  CHECK(j["p_value"].get<double>() < 0.01);
  CHECK(!j["why"].get<std::string>().empty());
}

TEST_CASE("gate printers' values: a hash in hex (%.4g would print two hashes alike), other units format_number") {
  CHECK(atlas::gates::format_value(850623738.0, "fnv1a32") == "0x32b37cfa");
  CHECK(atlas::gates::format_value(850623739.0, "fnv1a32") == "0x32b37cfb");
  CHECK(atlas::gates::format_value(850623738.0, "count") == "850623738");
  CHECK(atlas::gates::format_value(17959.8, "tok/s") == "17960");  // as diff and run print it
  CHECK(atlas::gates::format_value(std::nullopt, "fnv1a32") == "-");
}

TEST_CASE("hash-unit counted metrics are identities: any change fails, nothing improves") {
  const auto b = test::baseline_metric(377978257, {377978257}, MetricKind::counted, Better::lower, {}, "fnv1a32");
  auto lower = test::metric({12345}, MetricKind::counted, Better::lower, "fnv1a32");
  const auto v = judge_metric("decode-anatomy/output_fingerprint", &b, &lower, settings());
  CHECK(v.status == VerdictStatus::regression);  // "lower is better" must not make it an improvement
  CHECK(v.rule == "identity");
  CHECK(!v.delta_pct.has_value());  // a percentage of a hash means nothing
  CHECK(v.why.find("0x16877d91 -> 0x00003039") != std::string::npos);  // hex: %g would round hashes
  // Every run counts: 3 of 7 runs with another output fail although the median is unchanged.
  auto some = test::metric({377978257, 377978257, 12345, 377978257, 12345, 377978257, 12345}, MetricKind::counted,
                           Better::lower, "fnv1a32");
  const auto vs = judge_metric("decode-anatomy/output_fingerprint", &b, &some, settings());
  CHECK(vs.status == VerdictStatus::regression);
  CHECK(vs.why.find("changed in 3 of 7 runs (0x16877d91 -> 0x00003039)") != std::string::npos);
  CHECK(vs.candidate_value == 12345.0);
  auto same = test::metric({377978257}, MetricKind::counted, Better::lower, "fnv1a32");
  CHECK(judge_metric("decode-anatomy/output_fingerprint", &b, &same, settings()).status == VerdictStatus::same);
}

TEST_CASE("reasons print values as the tables do, with more digits only where two values would read alike") {
  // A counted metric 28.5312 against 28.53: four significant digits would say "28.53 is worse
  // than 28.53".
  const auto b = test::baseline_metric(28.53, {28.53}, MetricKind::counted, Better::lower, {0, 0}, "count");
  auto worse = test::metric({28.5312}, MetricKind::counted, Better::lower, "count");
  const auto v = judge_metric("decode-anatomy/launches_per_token", &b, &worse, settings());
  CHECK(v.why == "counted metric is gated exactly: 28.5312 is worse than 28.53");
  // Clearly different values print as format_number does (17960, as diff and run print it).
  const auto b2 = test::baseline_metric(15000, {15000}, MetricKind::counted, Better::lower, {0, 0}, "count");
  auto worse2 = test::metric({17959.8}, MetricKind::counted, Better::lower, "count");
  CHECK(judge_metric("k/m", &b2, &worse2, settings()).why == "counted metric is gated exactly: 17960 is worse than 15000");
}

TEST_CASE("counted metric within its tolerance: the why's sign agrees with the delta column") {
  // A new user saw "changed by -535.6" beside +0.23%: the why printed the improvement, not the change.
  const auto b = test::baseline_metric(222330, {222330}, MetricKind::counted, Better::lower, {0.005, 0}, "instructions");
  auto up = test::metric({222865.6}, MetricKind::counted, Better::lower, "instructions");
  auto v = judge_metric("instructions/instructions_per_decode_token", &b, &up, settings());
  CHECK(v.status == VerdictStatus::same);
  CHECK(*v.delta_pct > 0);
  CHECK(v.why == "changed by +535.6 instructions, within the tolerance 1112");
  auto down = test::metric({222000}, MetricKind::counted, Better::lower, "instructions");
  v = judge_metric("instructions/instructions_per_decode_token", &b, &down, settings());
  CHECK(*v.delta_pct < 0);
  CHECK(v.why == "changed by -330 instructions, within the tolerance 1112");
  // Higher is better: a rise is still "+".
  const auto acc = test::baseline_metric(100, {100}, MetricKind::counted, Better::higher, {0.05, 0}, "count");
  auto rise = test::metric({102}, MetricKind::counted, Better::higher, "count");
  CHECK(judge_metric("k/m", &acc, &rise, settings()).why == "changed by +2 count, within the tolerance 5");
}

TEST_CASE("equality metrics: graph launches per token falling to 0 (capture lost) is a regression, not improved") {
  const auto b = test::baseline_metric(1, {1}, MetricKind::counted, Better::lower, {0, 0}, "count");
  auto lost = test::metric({0, 0, 0}, MetricKind::counted, Better::lower, "count");
  const std::string key = "decode-anatomy/graph_launches_per_token/qkv";
  // Without the rule the direction says "improved" (the old behaviour).
  CHECK(judge_metric(key, &b, &lost, settings()).status == VerdictStatus::improved);
  CompareSettings s;
  s.equality_segments = {"graph_launches_per_token"};
  auto v = judge_metric(key, &b, &lost, s);
  CHECK(v.status == VerdictStatus::regression);
  CHECK(v.rule == "equality");
  CHECK(v.why.find("expected exactly 1, got 0") == 0);
  // Mode-prefixed keys match by segment; more launches regress too; equal passes.
  auto two = test::metric({2}, MetricKind::counted, Better::lower, "count");
  CHECK(judge_metric("decode-anatomy/eager/graph_launches_per_token/qkv", &b, &two, s).status == VerdictStatus::regression);
  auto one = test::metric({1}, MetricKind::counted, Better::lower, "count");
  CHECK(judge_metric(key, &b, &one, s).status == VerdictStatus::same);
  // Only whole segments match; other counted metrics keep their direction.
  CHECK_FALSE(matches_segment("decode-anatomy/graph_launches_per_token_total", s.equality_segments));
  CHECK(judge_metric("decode-anatomy/launches_per_token", &b, &lost, s).status == VerdictStatus::improved);
}

TEST_CASE("failing_metrics names what failed the comparison, regressions first") {
  const auto b = test::baseline_metric(10, {10}, MetricKind::counted, Better::lower, {0, 0}, "count");
  auto worse = test::metric({11}, MetricKind::counted, Better::lower, "count");
  auto fine = test::metric({10}, MetricKind::counted, Better::lower, "count");
  std::vector<Verdict> vs = {judge_metric("a/same", &b, &fine, settings()), judge_metric("z/worse", &b, &worse, settings()),
                             judge_metric("b/lost", &b, nullptr, settings()), judge_metric("c/new", nullptr, &fine, settings())};
  CHECK(failing_metrics(vs) == "regression: z/worse (+10.00%); missing: b/lost");
  CHECK(failing_metrics({vs[0], vs[3]}).empty());
  std::vector<Verdict> many(7, vs[1]);
  CHECK(failing_metrics(many, 2) == "regression: z/worse (+10.00%), z/worse (+10.00%) and 5 more");
}
