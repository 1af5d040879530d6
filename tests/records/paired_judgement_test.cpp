// The paired judgement (records/paired_judgement.hpp) on synthetic interleaved rounds: the
// properties the gate and `ab` promise.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "records/error.hpp"
#include "records/paired_judgement.hpp"
#include "records/stopping_rule.hpp"

using namespace atlas::records;

namespace {

/// Standard normal from mt19937_64 bits only (reproducible on every standard library).
struct Normal {
  std::mt19937_64 rng;
  explicit Normal(std::uint64_t seed) : rng(seed) {}
  double u() { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53; }
  double operator()() { return std::sqrt(-2 * std::log(u())) * std::cos(2 * std::numbers::pi * u()); }
};

struct Rounds {
  std::vector<double> base, head;
};

/// `n` rounds of a value near 100 with relative noise `noise` per run, head shifted by `shift`,
/// both sides drifting together by `drift` per round (what interleaving cancels).
Rounds rounds(int n, double shift, double noise, std::uint64_t seed, double drift = 0) {
  Normal z(seed);
  Rounds r;
  for (int i = 0; i < n; ++i) {
    const double level = 100 * (1 + drift * i);
    r.base.push_back(level * (1 + noise * z()));
    r.head.push_back(level * (1 + shift) * (1 + noise * z()));
  }
  return r;
}

}  // namespace

TEST_CASE("judge_paired: a 5% slowdown with low noise is a regression") {
  const auto r = rounds(12, 0.05, 0.005, 1);
  const auto v = judge_paired(r.base, r.head, Better::lower, 0.03);
  CHECK(v.status == PairedStatus::regression);
  CHECK(v.change == doctest::Approx(0.05).epsilon(0.2));
  CHECK(v.ci_lo > 0);
  CHECK(v.rounds == 12);
  CHECK_FALSE(v.rules_out_regression);
  // The same data read as higher-is-better (a throughput) is an improvement.
  CHECK(judge_paired(r.base, r.head, Better::higher, 0.03).status == PairedStatus::improved);
}

TEST_CASE("judge_paired: A/A with noise is never a regression (200 seeds)") {
  int regressions = 0, same = 0, undecided = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const auto r = rounds(20, 0.0, 0.02, seed);
    const auto v = judge_paired(r.base, r.head, Better::lower, 0.03);
    regressions += v.status == PairedStatus::regression;
    same += v.status == PairedStatus::same;
    undecided += v.status == PairedStatus::undecided;
  }
  CHECK(regressions == 0);
  CHECK(same + undecided >= 195);  // a few "improved" are allowed by chance, no more
}

TEST_CASE("judge_paired: drift shared by both sides does not read as a regression") {
  // 1% per round for 16 rounds: the last runs are 15% slower than the first. A stored baseline
  // from the first minutes would call the later runs a regression; paired rounds do not.
  const auto r = rounds(16, 0.0, 0.003, 7, 0.01);
  const auto v = judge_paired(r.base, r.head, Better::lower, 0.03);
  CHECK(v.status == PairedStatus::same);
  CHECK(v.rules_out_regression);
}

TEST_CASE("judge_paired: too few rounds are undecided, never same") {
  // Three rounds of a 38% shift (an `ab --repetitions 3` run): no test can decide.
  const std::vector<double> base = {55.1, 54.8, 55.6}, head = {76.2, 75.9, 76.8};
  auto v = judge_paired(base, head, Better::lower, 0.03);
  CHECK(v.status == PairedStatus::undecided);
  CHECK_FALSE(v.ci_finite);
  CHECK_FALSE(v.rules_out_regression);
  CHECK(v.why.find("needs at least 8 rounds") != std::string::npos);
  // Identical sides over 3 rounds: still not "same" (a change of 3% could not have been seen).
  CHECK(judge_paired(base, base, Better::lower, 0.03).status == PairedStatus::undecided);
  CHECK(min_rounds_for({}) == 8);
}

TEST_CASE("judge_paired: same only when a change of the tolerance is excluded") {
  const auto quiet = rounds(16, 0.0, 0.003, 3);
  auto v = judge_paired(quiet.base, quiet.head, Better::lower, 0.03);
  CHECK(v.status == PairedStatus::same);
  CHECK(v.ci_lo > -0.03);
  CHECK(v.ci_hi < 0.03);
  CHECK(v.mde < 0.03);
  // The same number of rounds with 10% noise: the interval is wider than the tolerance.
  const auto noisy = rounds(16, 0.0, 0.10, 3);
  v = judge_paired(noisy.base, noisy.head, Better::lower, 0.03);
  CHECK(v.status == PairedStatus::undecided);
  CHECK(v.mde > 0.03);
  CHECK(v.why.find("> tolerance") != std::string::npos);
}

TEST_CASE("A/A noise and the minimum detectable effect") {
  // Successive ratios 1.01, 0.99.., robust sd = 1.4826 * median |ln ratio|.
  const std::vector<double> base = {100, 101, 100, 101, 100};
  CHECK(aa_noise(base) == doctest::Approx(1.4826 * std::log(1.01)));
  CHECK(std::isnan(aa_noise(std::vector<double>{1, 2})));
  // (z_.995 + z_.95) * sigma * sqrt(pi / (3 n)), as a relative change.
  const double z = 2.5758293035489004 + 1.6448536269514722;
  CHECK(minimum_detectable_effect(0.01, 12) == doctest::Approx(std::expm1(z * 0.01 * std::sqrt(std::numbers::pi / 36))));
  CHECK(minimum_detectable_effect(0.01, 48) < minimum_detectable_effect(0.01, 12));
}

TEST_CASE("judge_paired: bad input is an error naming the round") {
  CHECK_THROWS_WITH_AS(judge_paired(std::vector<double>{1, 2}, std::vector<double>{1}, Better::lower, 0.03),
                       doctest::Contains("2 base values but 1 head values"), RecordError);
  CHECK_THROWS_WITH_AS(judge_paired(std::vector<double>{1, 0}, std::vector<double>{1, 1}, Better::lower, 0.03),
                       doctest::Contains("round 1"), RecordError);
}

TEST_CASE("DecidedOrCap: decided, hopeless noise, load, caps") {
  const DecidedOrCap gate(Question::regression, 8, 40, 120);
  RoundState st;
  st.rounds = st.rounds_run = 6;
  PairedVerdict undecided;
  undecided.tolerance = 0.03;
  undecided.aa_noise = 0.005;
  st.verdicts = {undecided};
  CHECK_FALSE(gate.should_stop(st));  // below min_rounds
  st.rounds = st.rounds_run = 8;
  CHECK_FALSE(gate.should_stop(st));  // undecided but decidable within 40 rounds
  PairedVerdict not_worse = undecided;
  not_worse.rules_out_regression = true;  // the gate's question is answered
  st.verdicts = {not_worse};
  CHECK(*gate.should_stop(st) == "every metric decided");
  // The same verdict is not decided for ab's two-sided question.
  const DecidedOrCap ab(Question::two_sided, 8, 40, 120);
  CHECK_FALSE(ab.should_stop(st));
  PairedVerdict hopeless = undecided;
  hopeless.aa_noise = 0.2;
  st.verdicts = {hopeless};
  CHECK(gate.should_stop(st)->find("noise") == 0);
  st.verdicts = {undecided};
  st.rounds_run = 40;
  CHECK(gate.should_stop(st)->find("round cap") == 0);
  st.rounds_run = 10;
  st.elapsed_s = 110;  // 11 s a round: another pair would end at 132 s
  CHECK(gate.should_stop(st)->find("time cap") == 0);
  const DecidedOrCap loaded(Question::regression, 8, 40, 120, {}, 0.25);
  st.elapsed_s = 1;
  st.rounds_run = 10;
  st.rounds = 6;  // 4 of 10 disturbed
  CHECK(loaded.should_stop(st)->find("load: 4 of 10") == 0);
  CHECK_THROWS_AS(DecidedOrCap(Question::regression, 8, 4, 120), RecordError);
}

TEST_CASE("GroupSequential: looks at the schedule only, Bonferroni confidence, caps spend what is left") {
  const GroupSequential gs(Question::regression, {12, 24, 40, 60, 80}, 80, 120, 0.99);
  CHECK(gs.look_confidence() == doctest::Approx(0.998));
  RoundState st;
  st.rounds = st.rounds_run = 10;
  st.elapsed_s = 5;
  CHECK_FALSE(gs.look(st, 0.99));  // before the first look: nothing is judged
  st.rounds = st.rounds_run = 12;
  auto lk = gs.look(st, 0.99);
  REQUIRE(lk);
  CHECK(lk->confidence == doctest::Approx(0.998));
  CHECK_FALSE(lk->final);
  st.looks_made = 1;
  st.rounds = st.rounds_run = 14;
  CHECK_FALSE(gs.look(st, 0.99));  // between looks
  // Undecided, however noisy the rounds so far look: the rule runs on (DecidedOrCap stopped here).
  PairedVerdict noisy;
  noisy.tolerance = 0.03;
  noisy.aa_noise = 0.2;
  st.verdicts = {noisy};
  CHECK_FALSE(gs.should_stop(st));
  const DecidedOrCap old_rule(Question::regression, 8, 40, 120);
  CHECK(old_rule.should_stop(st)->find("noise") == 0);
  PairedVerdict done = noisy;
  done.rules_out_regression = true;
  st.verdicts = {done};
  CHECK(*gs.should_stop(st) == "every metric decided");
  // The gate's question is answered by one regression, whatever the other metrics still need.
  PairedVerdict worse = noisy;
  worse.status = PairedStatus::regression;
  st.verdicts = {worse, noisy};
  CHECK(*gs.should_stop(st) == "a regression decided");
  const GroupSequential two_sided(Question::two_sided, {12, 24, 40, 60, 80}, 80, 120, 0.99);
  CHECK_FALSE(two_sided.should_stop(st));  // ab's question wants every metric
  // The last scheduled look is final.
  st.looks_made = 4;
  st.rounds = st.rounds_run = 80;
  lk = gs.look(st, 0.99);
  REQUIRE(lk);
  CHECK(lk->final);
  // A time cap after 2 looks: a final look spending the 3 skipped looks' alpha as well.
  st.looks_made = 2;
  st.rounds = st.rounds_run = 30;
  st.elapsed_s = 115;
  lk = gs.look(st, 0.99);
  REQUIRE(lk);
  CHECK(lk->final);
  CHECK(lk->reason.find("time cap") == 0);
  CHECK(lk->confidence == doctest::Approx(1 - (0.01 - 2 * 0.002)));
  // Load never ends the run: a third of the rounds disturbed, and the rule waits for the next
  // look's judged rounds (the time budget is spent on rounds that were given their CPU).
  st.elapsed_s = 10;
  st.rounds_run = 30;
  st.rounds = 20;
  CHECK_FALSE(gs.look(st, 0.99).has_value());
  st.rounds_run = 79;  // 59 of 79 disturbed: still no stop before a cap
  CHECK_FALSE(gs.look(st, 0.99).has_value());
  // Caps: rounds run (disturbed ones included).
  st.rounds = 70;
  st.rounds_run = 80;
  CHECK(gs.look(st, 0.99)->reason.find("round cap") == 0);
  // The union bound over every look made never exceeds alpha.
  CHECK(gs.closing_confidence(st, 0.99) == doctest::Approx(1 - (0.01 - 2 * 0.002)));
  CHECK(check_looks({12, 24}, 0.99).empty());
  CHECK(check_looks({8, 16, 24, 32, 40}, 0.99).find("below 10") != std::string::npos);
  CHECK_THROWS_AS(GroupSequential(Question::regression, {12, 24}, 20, 120, 0.99), RecordError);
}
