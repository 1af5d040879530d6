// The report over a generated store: lines keyed by machine class and CPU, records left out
// with a count, a record that does not parse named and skipped, drift against a BASELINE that
// an accept clears, and the site's pages.
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "common/atomic_file.hpp"
#include "common/temp_dir.hpp"
#include "gates/baseline.hpp"
#include "records/stats.hpp"
#include "tests/sanitized.hpp"
#include "tests/trends/trend_fixtures.hpp"
#include "trends/report.hpp"
#include "trends/site.hpp"
#include "trends/svg_chart.hpp"

using namespace atlas;
namespace fs = std::filesystem;

namespace {

struct Store {
  TempDir dir{"atlas-trends-"};
  fs::path store() const { return dir.path() / ".benchmarks"; }
  fs::path baselines() const { return dir.path() / "baselines"; }
  trends::HistoryOptions options() const {
    trends::HistoryOptions o;
    o.store_dir = store();
    o.baselines_dir = baselines();
    o.config_for = [](const std::string& gate) {
      gates::GateConfig c;
      c.gate = gate;
      c.timed_tolerance = {0.05, 0};
      return c;
    };
    return o;
  }
};

constexpr int kCommits = 30;

// What "hundreds of records take seconds" allows the 300-record store below: it took 7.2 s
// (2026-12-07, one core of the 2-core box shared with other builds, 1-minute load ~6); the
// bound leaves a loaded CI box about 8x that.
constexpr double kReportSecondsBound = 60.0;

// 30 commits; us_per_token steps by `step` at commits 10 and 20, the counted metric -1 % (better) at 15.
// Returns the samples of commit 0 (the BASELINE's).
std::vector<double> write_history(const Store& s, double step = 0.02, std::uint64_t seed = 3) {
  std::mt19937_64 rng(seed);
  const auto samples = test::history_samples(rng, kCommits, 100.0, {10, 20}, step);
  for (int i = 0; i < kCommits; ++i) {
    auto r = test::trend_record(test::fake_sha(i), i, samples[i], i < 15 ? 1000 : 990);
    records::write_to_store(r, s.store());
  }
  return samples[0];
}

gates::Baseline baseline_at(double value, const std::vector<double>& samples) {
  gates::Baseline b;
  b.gate = "nightly";
  b.machine_class = "cpu-test";
  gates::BaselineMetric m;
  m.value = value;
  m.samples = samples;
  m.unit = "us";
  m.tolerance = {0.05, 0};
  gates::HistoryEntry init;
  init.commit = test::fake_sha(0);
  init.date = "2026-01-01T00:00:00Z";
  init.new_value = value;
  init.reason = "init";
  init.action = gates::HistoryAction::init;
  m.history.push_back(init);
  b.metrics["decode-anatomy/us_per_token"] = m;
  return b;
}

const trends::SeriesTrend* trend_of(const trends::Report& r, const std::string& key) {
  for (const auto& lt : r.trends)
    for (const auto& t : lt.series)
      if (t.key == key) return &t;
  return nullptr;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("report: two 2% steps pass a 5% BASELINE, a 6% drift fails it, and an accept of the step clears it") {
  Store s;
  // Two steps: +4.04 % in all, within the 5 % tolerance.
  const auto first = write_history(s, 0.02);
  const double value = records::stats::median(first);
  gates::save_baseline(gates::baseline_path(s.baselines(), "cpu-test", "nightly"), baseline_at(value, first));
  {
    const auto r = trends::make_report(s.options());
    CHECK(r.drift_regressions().empty());
    CHECK(trends::exit_code(r) == ExitCode::pass);
  }
  // Three steps' worth (+6.1 %) in two: past the tolerance.
  Store s3;
  const auto first3 = write_history(s3, 0.0305);
  const double value3 = records::stats::median(first3);
  auto b = baseline_at(value3, first3);
  const auto bpath = gates::baseline_path(s3.baselines(), "cpu-test", "nightly");
  gates::save_baseline(bpath, b);
  const auto r = trends::make_report(s3.options());
  REQUIRE(r.history.lines.size() == 1);
  CHECK(r.history.lines[0].commits.size() == kCommits);
  const auto* t = trend_of(r, "decode-anatomy/us_per_token");
  REQUIRE(t != nullptr);
  REQUIRE(t->drift.has_value());
  CHECK(t->drift->regression());
  CHECK(t->drift->reference.find("BASELINE") == 0);
  CHECK(trends::exit_code(r) == ExitCode::regression);
  REQUIRE(r.drift_regressions().size() == 1);
  CHECK(r.drift_regressions()[0] == r.history.lines[0].id() + " decode-anatomy/us_per_token");
  // The counted metric's step is exact, at the commit that made it.
  const auto* c = trend_of(r, "instructions/per_token");
  REQUIRE(c != nullptr);
  REQUIRE(c->steps.size() == 1);
  CHECK(c->steps[0].to == 15);
  CHECK(c->steps[0].delta_pct == doctest::Approx(-1.0));
  CHECK_FALSE(c->steps[0].worse);

  // An accept at commit 25 with the level then: the step stops failing.
  std::vector<double> now;
  const auto& series = r.history.lines[0].series.at("decode-anatomy/us_per_token");
  for (std::size_t i = 25; i < series.points.size(); ++i)
    now.insert(now.end(), series.points[i].samples.begin(), series.points[i].samples.end());
  auto& m = b.metrics["decode-anatomy/us_per_token"];
  gates::HistoryEntry accept;
  accept.commit = test::fake_sha(25);
  accept.date = "2026-01-02T00:00:00Z";
  accept.old_value = m.value;
  accept.new_value = records::stats::median(now);
  accept.reason = "the tokenizer change costs 6 %: reviewed";
  accept.action = gates::HistoryAction::accept;
  m.value = *accept.new_value;
  m.samples = now;
  m.history.push_back(accept);
  gates::save_baseline(bpath, b);
  const auto after = trends::make_report(s3.options());
  const auto* ta = trend_of(after, "decode-anatomy/us_per_token");
  REQUIRE(ta != nullptr);
  REQUIRE(ta->drift.has_value());
  CHECK_FALSE(ta->drift->regression());
  CHECK(ta->drift->since == test::fake_sha(25));
  CHECK(trends::exit_code(after) == ExitCode::pass);
}

TEST_CASE("report: a record that does not parse is named and skipped; the rest is read") {
  Store s;
  write_history(s, 0.0);
  const fs::path broken = s.store() / "cpu-test" / test::fake_sha(3) / "nightly-20260101T000330Z.json";
  write_file_atomic(broken, "{\"schema_version\": 1, \"suites\": ");
  const auto r = trends::make_report(s.options());
  REQUIRE(r.history.unparsable.size() == 1);
  CHECK(r.history.unparsable[0].path == broken);
  CHECK_FALSE(r.history.unparsable[0].error.empty());
  CHECK(r.history.records_read == kCommits);
  std::ostringstream out;
  trends::print_summary(r, out);
  CHECK(out.str().find("skipped (does not parse): " + broken.string()) != std::string::npos);
  CHECK(trends::exit_code(r) == ExitCode::pass);
}

TEST_CASE("report: invalid, test-hooked, dirty, other-model and noisy records never join a line; another CPU is its own line") {
  Store s;
  std::mt19937_64 rng(5);
  const auto samples = test::history_samples(rng, 12, 100.0);
  for (int i = 0; i < 12; ++i) records::write_to_store(test::trend_record(test::fake_sha(i), i, samples[i]), s.store());
  const std::vector<double> absurd(10, 1e6);  // any of these in a line would show
  auto invalid = test::trend_record(test::fake_sha(2), 100, absurd);
  invalid.valid = false;
  invalid.invalid_reason = "the suite crashed";
  records::write_to_store(invalid, s.store());
  auto hooked = test::trend_record(test::fake_sha(3), 101, absurd);
  hooked.config["target"]["options"]["backend"]["inject_decode_delay_us"] = 3;
  records::write_to_store(hooked, s.store());
  auto dirty = test::trend_record(test::fake_sha(4), 102, absurd);
  dirty.git.dirty = true;
  records::write_to_store(dirty, s.store());
  auto other = test::trend_record(test::fake_sha(5), 103, absurd);
  other.model.sha256 = std::string(64, 'e');
  other.model.path = "models/other.gguf";
  records::write_to_store(other, s.store());
  auto noisy = test::trend_record(test::fake_sha(6), 104, absurd, 1000);
  noisy.quiet_box = {{"before", {{"quiet", false}, {"reasons", {"load 3.1 per core"}}}}};
  records::write_to_store(noisy, s.store());
  auto other_cpu = test::trend_record(test::fake_sha(7), 105, absurd, 2000, "cpu-test", "Another CPU");
  records::write_to_store(other_cpu, s.store());

  const auto r = trends::make_report(s.options());
  REQUIRE(r.history.lines.size() == 2);
  const trends::Line* main_line = nullptr;
  const trends::Line* other_line = nullptr;
  for (const auto& l : r.history.lines) (l.cpu.find("Test CPU") == 0 ? main_line : other_line) = &l;
  REQUIRE(main_line != nullptr);
  REQUIRE(other_line != nullptr);
  CHECK(main_line->machine_class == other_line->machine_class);
  CHECK(main_line->cpu_id != other_line->cpu_id);
  CHECK(other_line->commits.size() == 1);
  CHECK(main_line->commits.size() == 12);
  CHECK(main_line->left_out.invalid == 1);
  CHECK(main_line->left_out.test_hooks == 1);
  CHECK(main_line->left_out.dirty == 1);
  CHECK(main_line->left_out.other_model == 1);
  REQUIRE(main_line->left_out.other_models.size() == 1);
  CHECK(main_line->left_out.other_models[0].find("models/other.gguf") == 0);
  CHECK(main_line->left_out.noisy == 1);
  for (const auto& p : main_line->series.at("decode-anatomy/us_per_token").points) CHECK(p.median < 1000);
  // The noisy record's counted metric is kept: commit 6 pools two records' counts.
  const auto& counted = main_line->series.at("instructions/per_token").points;
  CHECK(counted[6].samples.size() == 2);
}

TEST_CASE("report: timed metrics of a machine class that is not quiet are left out with a count; counted ones stay") {
  Store s;
  write_history(s, 0.0);
  auto o = s.options();
  o.config_for = [](const std::string& gate) {
    gates::GateConfig c;
    c.gate = gate;
    c.timed.enabled = true;  // a timed section without quiet classes: stored timed values are not gated
    return c;
  };
  const auto r = trends::make_report(o);
  REQUIRE(r.history.lines.size() == 1);
  const auto& l = r.history.lines[0];
  CHECK_FALSE(l.timed_trended);
  CHECK(l.left_out.timed_not_quiet == 1);
  CHECK(l.series.count("decode-anatomy/us_per_token") == 0);
  CHECK(l.series.count("instructions/per_token") == 1);
}

TEST_CASE("report site: pages open without a server, plots have data, axes are labelled, the regression is marked") {
  Store s;
  std::mt19937_64 rng(11);
  const auto samples = test::history_samples(rng, 3, 100.0, {2}, 0.10);
  for (int i = 0; i < 3; ++i) {
    auto r = test::trend_record(test::fake_sha(i), i, samples[i]);
    if (i == 2) {
      r.verdicts = {{"overall", "regression"},
                    {"reasons", {"regression: decode-anatomy/us_per_token (+10%)"}},
                    {"verdicts", {{{"metric", "decode-anatomy/us_per_token"}, {"verdict", "regression"}}}}};
    }
    records::write_to_store(r, s.store());
  }
  // A second machine class.
  records::write_to_store(test::trend_record(test::fake_sha(0, 'b'), 0, samples[0], 1000, "cpu-other"), s.store());
  gates::save_baseline(gates::baseline_path(s.baselines(), "cpu-test", "nightly"),
                       baseline_at(records::stats::median(samples[0]), samples[0]));
  const auto r = trends::make_report(s.options());
  const fs::path out = s.dir.path() / "site";
  const auto pages = trends::write_site(r, out);
  REQUIRE_FALSE(pages.empty());
  CHECK(pages.front() == out / "index.html");
  const std::string index = slurp(out / "index.html");
  CHECK(index.find("cpu-test/index.html") != std::string::npos);
  CHECK(index.find("cpu-other/index.html") != std::string::npos);
  const std::string cls = slurp(out / "cpu-test" / "index.html");
  CHECK(cls.find("last gate verdict") != std::string::npos);
  CHECK(cls.find(">regression<") != std::string::npos);
  std::string cpu_id;
  for (const auto& l : r.history.lines)
    if (l.machine_class == "cpu-test") cpu_id = l.cpu_id;
  const auto line_dir = out / "cpu-test" / ("nightly-" + cpu_id);
  const std::string page = slurp(line_dir / "decode-anatomy.html");
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("http://www.w3.org/2000/svg") != std::string::npos);  // the namespace only: nothing is fetched
  CHECK(count_of(page, "https://") == 0);
  CHECK(count_of(page, "class=\"plot\"") == 1);
  CHECK(count_of(page, "class=\"point\"") == 3);
  CHECK(count_of(page, "class=\"marker regression\"") == 1);
  CHECK(page.find("class=\"axis-label axis-label-x\"") != std::string::npos);
  CHECK(page.find("decode-anatomy/us_per_token (us)</text>") != std::string::npos);
  CHECK(page.find(">" + test::fake_sha(2).substr(0, 7) + "</text>") != std::string::npos);  // commits name the x axis
  CHECK(page.find("class=\"baseline\"") != std::string::npos);
  CHECK(page.find("class=\"spread\"") != std::string::npos);
}

TEST_CASE("report site: a y label too long for the chart's height is squeezed into it, a short one is left alone") {
  // Seen in a browser: "decode-anatomy/output_fingerprint (fnv1a32)" ran past the chart's top
  // and bottom and was cut. The rotated label has the plot's height (260 px chart: 202 px of
  // room around the plot's middle at 105 px).
  trends::Line line;
  line.commits = {{test::fake_sha(0), 0, false, {}}, {test::fake_sha(1), 60, false, {}}};
  trends::Series s;
  s.unit = "count";
  s.kind = records::MetricKind::counted;
  s.points = {{0, 5, 5, 5, {5}, ""}, {1, 5, 5, 5, {5}, ""}};
  const trends::SeriesTrend t;
  s.key = "decode-anatomy/stage_calls_per_token/attention";  // 54 characters with the unit
  const std::string long_chart = trends::svg_chart(line, s, t);
  CHECK(long_chart.find("textLength=\"202.0\" lengthAdjust=\"spacingAndGlyphs\">decode-anatomy/stage_calls_per_token/attention (count)</text>") !=
        std::string::npos);
  s.key = "ttft/e2e_ms";
  const std::string short_chart = trends::svg_chart(line, s, t);
  CHECK(short_chart.find("textLength") == std::string::npos);
  CHECK(short_chart.find(")\">ttft/e2e_ms (count)</text>") != std::string::npos);
}

TEST_CASE("report: hundreds of records take seconds (300 records of 40 metrics, read, analysed and written as a site)") {
  // Two machine classes x 150 commits, each record with 20 timed and 20 counted metrics (a
  // decode-anatomy record holds a few dozen): the size of a year of nightlies on two machines.
  Store s;
  constexpr int kMany = 150, kTimed = 20, kCounted = 20;
  std::mt19937_64 rng(21);
  for (const std::string cls : {"cpu-test", "cpu-other"}) {
    const char tag = cls == "cpu-test" ? 'c' : 'd';
    std::vector<std::vector<std::vector<double>>> timed;
    for (int k = 0; k < kTimed; ++k) timed.push_back(test::history_samples(rng, kMany, 100.0 + k, {75}, 0.02));
    for (int i = 0; i < kMany; ++i) {
      auto r = test::trend_record(test::fake_sha(i, tag), i, timed[0][static_cast<std::size_t>(i)], 1000, cls);
      for (int k = 1; k < kTimed; ++k) {
        auto m = r.suites["decode-anatomy"].metrics["us_per_token"];
        m.samples = timed[static_cast<std::size_t>(k)][static_cast<std::size_t>(i)];
        r.suites["decode-anatomy"].metrics["us_per_token_" + std::to_string(k)] = m;
      }
      for (int k = 1; k < kCounted; ++k) {
        auto m = r.suites["instructions"].metrics["per_token"];
        m.samples = {1000.0 + k + (i >= 100 ? 1 : 0)};
        r.suites["instructions"].metrics["per_token_" + std::to_string(k)] = m;
      }
      records::write_to_store(r, s.store());
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = trends::make_report(s.options());
  const auto pages = trends::write_site(r, s.dir.path() / "site");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("report over " << r.history.records_read << " records: " << seconds << " s (" << pages.size() << " pages)");
  CHECK(r.history.records_read == 2 * kMany);
  REQUIRE(r.history.lines.size() == 2);
  for (const auto& l : r.history.lines) {
    CHECK(l.commits.size() == static_cast<std::size_t>(kMany));
    CHECK(l.series.size() == static_cast<std::size_t>(kTimed + kCounted));
  }
  // Every counted metric's one step, at the commit that made it.
  const auto* c = trend_of(r, "instructions/per_token_7");
  REQUIRE(c != nullptr);
  REQUIRE(c->steps.size() == 1);
  CHECK(c->steps[0].to == 100);
  if (!test::kSanitized) CHECK(seconds < kReportSecondsBound);  // ASan's slowdown measures the sanitizer
}

TEST_CASE("report site: a changed output fingerprint is a step marker at the commit that changed it, not a plotted value") {
  Store s;
  std::mt19937_64 rng(13);
  const auto samples = test::history_samples(rng, 6, 100.0);
  for (int i = 0; i < 6; ++i) {
    auto r = test::trend_record(test::fake_sha(i), i, samples[static_cast<std::size_t>(i)]);
    records::Metric f;
    f.unit = "fnv1a32";
    f.kind = records::MetricKind::counted;
    f.samples = {i < 4 ? 12345.0 : 67890.0};
    r.suites["decode-anatomy"].metrics["output_fingerprint"] = f;
    records::write_to_store(r, s.store());
  }
  const auto r = trends::make_report(s.options());
  const auto* t = trend_of(r, "decode-anatomy/output_fingerprint");
  REQUIRE(t != nullptr);
  REQUIRE(t->steps.size() == 1);
  CHECK(t->steps[0].from == 3);
  CHECK(t->steps[0].to == 4);
  const fs::path out = s.dir.path() / "site";
  trends::write_site(r, out);
  std::string cpu_id;
  for (const auto& l : r.history.lines) cpu_id = l.cpu_id;
  const std::string page = slurp(out / "cpu-test" / ("nightly-" + cpu_id) / "decode-anatomy.html");
  const std::string marker = "step " + test::fake_sha(3).substr(0, 7) + ".." + test::fake_sha(4).substr(0, 7) + ": value changed";
  CHECK(page.find(marker) != std::string::npos);
  // A hash has no magnitude: its points read in hex.
  CHECK(page.find("data-median=\"0x00003039\"") != std::string::npos);
}
