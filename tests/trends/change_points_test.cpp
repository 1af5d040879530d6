// E-divisive means on generated histories with the noise of real records (trend_fixtures.hpp):
// a planted drift of three 2 % steps is found and fails, flat histories give (almost) no steps.
#include <doctest/doctest.h>

#include <chrono>

#include "records/stats.hpp"
#include "tests/trends/trend_fixtures.hpp"
#include "trends/change_points.hpp"
#include "trends/error.hpp"
#include "trends/trend.hpp"

using namespace atlas;

namespace {

// A line of one timed metric whose commits hold the given samples.
trends::History line_of(const std::vector<std::vector<double>>& commits) {
  trends::History h;
  trends::Line line;
  line.machine_class = "cpu-test";
  line.gate_or_suite = "nightly";
  trends::Series s;
  s.key = "decode-anatomy/us_per_token";
  s.unit = "us";
  for (std::size_t i = 0; i < commits.size(); ++i) {
    trends::Commit c;
    c.sha = test::fake_sha(static_cast<int>(i));
    line.commits.push_back(c);
    trends::Point p;
    p.commit = i;
    p.samples = commits[i];
    p.median = records::stats::median(p.samples);
    p.p10 = records::stats::percentile(p.samples, 10);
    p.p90 = records::stats::percentile(p.samples, 90);
    s.points.push_back(p);
  }
  line.series[s.key] = s;
  h.lines.push_back(line);
  return h;
}

trends::HistoryOptions five_percent() {
  trends::HistoryOptions o;
  o.config_for = [](const std::string&) {
    gates::GateConfig c;
    c.gate = "nightly";
    c.timed_tolerance = {0.05, 0};
    return c;
  };
  return o;
}

std::vector<double> medians(const std::vector<std::vector<double>>& commits) {
  std::vector<double> m;
  for (const auto& c : commits) m.push_back(records::stats::median(c));
  return m;
}

}  // namespace

TEST_CASE("a planted drift of three 2% steps is found and fails a 5% tolerance that each step passes") {
  int outside = 0;  // steps found away from the planted ones (commits 10, 20, 30)
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    const auto h = line_of(test::history_samples(rng, 40, 100.0, {10, 20, 30}, 0.02));
    const auto trends = trends::analyse(h, five_percent());
    REQUIRE(trends.size() == 1);
    REQUIRE(trends[0].series.size() == 1);
    const auto& t = trends[0].series[0];
    int inside = 0;
    for (const auto& st : t.steps) {
      CHECK(st.worse);
      CHECK(st.delta_pct > 1.0);
      CHECK(st.confidence >= 0.999);
      // Where a 2 % step lies is known to within a few commits at this noise.
      const bool near = (st.to >= 7 && st.to <= 13) || (st.to >= 17 && st.to <= 23) || (st.to >= 27 && st.to <= 33);
      (near ? inside : outside) += 1;
      if (!near) MESSAGE("seed " << seed << ": a step at commit " << st.to);
    }
    CHECK(inside >= 1);
    REQUIRE(t.drift.has_value());
    CAPTURE(t.drift->verdict.why);
    CAPTURE(t.drift->reference);
    CHECK(t.drift->regression());
    // The whole drift, about +6.1 %, against the history's start.
    REQUIRE(t.drift->verdict.delta_pct.has_value());
    CHECK(*t.drift->verdict.delta_pct > 4.5);
    CHECK(*t.drift->verdict.delta_pct < 8.0);
  }
  CHECK(outside <= 1);
}

TEST_CASE("one 2% step is found but is no drift past a 5% tolerance") {
  int found = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(100 + seed);
    const auto h = line_of(test::history_samples(rng, 40, 100.0, {20}, 0.02));
    const auto t = trends::analyse(h, five_percent())[0].series[0];
    found += t.steps.empty() ? 0 : 1;
    REQUIRE(t.drift.has_value());
    CHECK_FALSE(t.drift->regression());
  }
  MESSAGE("one 2% step found in " << found << " of 10 histories");
  CHECK(found >= 1);
}

TEST_CASE("200 flat histories give at most one false step in total, seeded and fast") {
  const auto t0 = std::chrono::steady_clock::now();
  int steps = 0, drifts = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(1000 + seed);
    const auto h = line_of(test::history_samples(rng, 40, 100.0));
    const auto t = trends::analyse(h, five_percent())[0].series[0];
    steps += static_cast<int>(t.steps.size());
    drifts += t.drift && t.drift->regression() ? 1 : 0;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("200 flat histories: " << steps << " false steps, " << seconds << " s");
  CHECK(steps <= 1);
  CHECK(drifts == 0);
}

TEST_CASE("change points: the same series and seed give the same answer; settings are checked") {
  std::mt19937_64 rng(7);
  const auto x = medians(test::history_samples(rng, 30, 50.0, {15}, 0.05));
  trends::ChangePointSettings s;
  const auto a = trends::e_divisive_means(x, s);
  const auto b = trends::e_divisive_means(x, s);
  REQUIRE(a.size() == 1);
  REQUIRE(b.size() == 1);
  CHECK(a[0].index == 15);
  CHECK(a[0].index == b[0].index);
  CHECK(a[0].p_value == b[0].p_value);
  CHECK(a[0].q == b[0].q);
  CHECK(a[0].p_value == doctest::Approx(1.0 / (s.permutations + 1)));

  CHECK(trends::e_divisive_means(std::vector<double>(7, 1.0), s).empty());  // shorter than 2 * min_segment
  trends::ChangePointSettings bad = s;
  bad.min_segment = 1;
  CHECK_THROWS_AS(trends::e_divisive_means(x, bad), trends::TrendError);
  bad = s;
  bad.permutations = 0;
  CHECK_THROWS_AS(trends::e_divisive_means(x, bad), trends::TrendError);
  bad = s;
  bad.max_p = 1;
  CHECK_THROWS_AS(trends::e_divisive_means(x, bad), trends::TrendError);
  std::vector<double> with_nan = x;
  with_nan[3] = std::nan("");
  CHECK_THROWS_AS(trends::e_divisive_means(with_nan, s), trends::TrendError);
}

TEST_CASE("change points: the statistic of a known split (Matteson and James's formula by hand)") {
  // x = {0, 0, 0, 0, 1, 1, 1, 1}: cross sum 16 over 4 x 4 pairs, no within-side distance, so
  // E = 2/16 * 16 = 2 and q = 16/8 * 2 = 4 at the split 4.
  const std::vector<double> x = {0, 0, 0, 0, 1, 1, 1, 1};
  trends::ChangePointSettings s;
  s.max_p = 0.5;
  s.min_segment = 2;
  const auto cps = trends::e_divisive_means(x, s);
  REQUIRE_FALSE(cps.empty());
  CHECK(cps[0].index == 4);
  CHECK(cps[0].q == doctest::Approx(4.0));
}

TEST_CASE("steps of a counted metric: every change, exact, confidence 1") {
  trends::Series s;
  s.kind = records::MetricKind::counted;
  s.unit = "count";
  for (std::size_t i = 0; i < 6; ++i) {
    trends::Point p;
    p.commit = i;
    p.median = i < 3 ? 1000 : 1010;
    p.samples = {p.median};
    s.points.push_back(p);
  }
  const auto steps = trends::find_steps(s, {});
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].from == 2);
  CHECK(steps[0].to == 3);
  CHECK(steps[0].delta_pct == doctest::Approx(1.0));
  CHECK(steps[0].confidence == 1);
  CHECK(steps[0].worse);
}
