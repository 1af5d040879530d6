// Every verdict the gate can print, walked: its word, the start of its reason and the exit code it
// leads to must agree with each other and with the README's exit-code table (a reader of any one
// of the three must not be told something the other two contradict).
#include "common/build_paths.hpp"
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/exit_code.hpp"
#include "gates/compare.hpp"
#include "gates/interleaved.hpp"
#include "records/diff.hpp"

using namespace atlas;
using namespace atlas::gates;

namespace {

// README.md's exit-code table: code -> the row's text.
std::map<int, std::string> readme_exit_rows() {
  std::ifstream in(std::string(ATLAS_SOURCE_DIR) + "/README.md");
  REQUIRE(in.good());
  std::map<int, std::string> rows;
  std::string line;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.rfind("## Exit codes", 0) == 0) in_table = true;
    else if (in_table && line.rfind("## ", 0) == 0) break;
    if (in_table && line.size() > 4 && line.rfind("| ", 0) == 0 && line[2] >= '0' && line[2] <= '3' && line[3] == ' ')
      rows[line[2] - '0'] = line;
  }
  return rows;
}

records::PairedVerdict paired(records::PairedStatus status, double change, double lo, double hi, bool rules_out,
                              const std::string& why) {
  records::PairedVerdict v;
  v.status = status;
  v.rounds = 24;
  v.tolerance = 0.03;
  v.change = change;
  v.ci_lo = lo;
  v.ci_hi = hi;
  v.ci_finite = true;
  v.aa_noise = 0.01;
  v.mde = 0.02;
  v.rules_out_regression = rules_out;
  v.why = why;
  return v;
}

struct TimedCase {
  const char* name;
  records::PairedVerdict v;
  int disturbed = 0;
  double mde = 0.02;
  const char* word;          // to_string(status)
  const char* reason_start;  // how the reason must begin
  int exit;                  // README's code
};

}  // namespace

TEST_CASE("timed verdicts: the word, the reason's first words and the exit code agree with the README table") {
  const auto rows = readme_exit_rows();
  REQUIRE(rows.size() == 4);
  using PS = records::PairedStatus;
  const std::vector<TimedCase> cases = {
      {"regression", paired(PS::regression, 0.06, 0.04, 0.08, false, "worse: change +6%"), 0, 0.02, "regression", "worse:", 1},
      // Disturbed rounds are never judged, so a regression found on the rest stands (2026-12-02).
      {"regression with disturbed rounds dropped", paired(PS::regression, 0.06, 0.04, 0.08, false, "worse: change +6%"), 10, 0.02,
       "regression", "worse:", 1},
      {"same", paired(PS::same, 0.0, -0.01, 0.01, true, "same: change 0%"), 0, 0.02, "pass", "pass:", 0},
      // The case a new user saw: the two-sided answer is undecided (the interval reaches below
      // -tolerance) but a slowdown of the tolerance is excluded, so the gate passes; the reason
      // used to read "undecided: ..." beside the word pass.
      {"undecided both ways, slowdown excluded", paired(PS::undecided, -0.02, -0.06, 0.01, true, "undecided: change -2%"), 0,
       0.02, "pass", "pass:", 0},
      {"better", paired(PS::improved, -0.06, -0.08, -0.04, true, "better: change -6%"), 0, 0.02, "pass", "pass:", 0},
      {"undecided", paired(PS::undecided, 0.01, -0.01, 0.05, false, "undecided: change +1%"), 0, 0.02, "undecided",
       "undecided:", 2},
      {"undecided under load", paired(PS::undecided, 0.01, -0.01, 0.05, false, "undecided: change +1%"), 10, 0.02,
       "inconclusive", "inconclusive: load:", 2},
      {"noise above the tolerance", paired(PS::undecided, 0.01, -0.05, 0.09, false, "undecided: change +1%"), 0, 0.08,
       "not gated", "not gated:", 2},
  };
  InterleavedSettings s;
  s.max_disturbed_share = 0.25;
  const TimedMetric m{"decode-anatomy/us_per_token", 0.03};
  for (const auto& c : cases) {
    CAPTURE(c.name);
    auto v = c.v;
    v.mde = c.mde;
    const TimedVerdict t = classify(m, v, c.disturbed, 24, s);
    CHECK(std::string(to_string(t.status)) == c.word);
    CHECK(t.why.rfind(c.reason_start, 0) == 0);
    if (t.status == TimedStatus::pass) CHECK(t.why.find("undecided:") == std::string::npos);
    const int code = to_int(exit_code(overall_of(std::vector<TimedVerdict>{t})));
    CHECK(code == c.exit);
    // The README's row for that code names the verdict word.
    REQUIRE(rows.count(code) == 1);
    CHECK(rows.at(code).find(std::string("`") + c.word + "`") != std::string::npos);
  }
  // A timed metric the rounds never produced.
  TimedVerdict missing;
  missing.status = TimedStatus::missing;
  CHECK(to_int(exit_code(overall_of(std::vector<TimedVerdict>{missing}))) == 2);
  CHECK(rows.at(2).find("`missing` timed metric") != std::string::npos);
}

TEST_CASE("stored-baseline verdicts: each status's exit code is the README row that names it") {
  const auto rows = readme_exit_rows();
  REQUIRE(rows.size() == 4);
  const std::vector<std::pair<VerdictStatus, int>> cases = {
      {VerdictStatus::same, 0},       {VerdictStatus::improved, 0},     {VerdictStatus::new_metric, 0},
      {VerdictStatus::regression, 1}, {VerdictStatus::missing, 1},      {VerdictStatus::incomparable, 1},
      {VerdictStatus::needs_more_samples, 2},
  };
  for (const auto& [status, code] : cases) {
    CAPTURE(to_string(status));
    Verdict v;
    v.status = status;
    CHECK(to_int(exit_code(overall_of(std::vector<Verdict>{v}))) == code);
    CHECK(rows.at(code).find(std::string("`") + to_string(status) + "`") != std::string::npos);
  }
}

TEST_CASE("diff rows: each word's exit code is the README row that names it for diff; the worst row decides") {
  const auto rows = readme_exit_rows();
  REQUIRE(rows.size() == 4);
  // The part of a row that speaks of diff: "`diff`: ..." up to the next ')' or ';'.
  const auto diff_part = [&](int code) {
    const std::string& row = rows.at(code);
    const auto at = row.find("`diff`:");
    if (at == std::string::npos) return std::string();
    return row.substr(at, row.find_first_of(");", at) - at);
  };
  using C = records::Change;
  // An incomparable row (unit or kind changed) exited 0 while the gate fails the same metric.
  const std::vector<std::pair<C, int>> cases = {{C::improved, 0},  {C::unchanged, 0}, {C::added, 0},
                                                {C::removed, 0},   {C::regressed, 1}, {C::changed, 1},
                                                {C::incomparable, 1}, {C::noise, 2}};
  for (const auto& [change, code] : cases) {
    const std::string word = records::to_string(change);
    CAPTURE(word);
    CHECK(to_int(records::exit_code_of(change)) == code);
    CHECK(diff_part(code).find("`" + word + "`") != std::string::npos);
  }
  const auto with = [](std::vector<C> changes) {
    records::RecordDiff d;
    for (const C c : changes) {
      records::MetricDiff m;
      m.change = c;
      d.metrics.push_back(m);
    }
    return to_int(records::exit_code(d));
  };
  CHECK(with({}) == 0);
  CHECK(with({C::improved, C::added, C::removed}) == 0);
  CHECK(with({C::improved, C::noise}) == 2);
  CHECK(with({C::noise, C::incomparable, C::improved}) == 1);
  CHECK(with({C::regressed, C::noise}) == 1);
}
