// The timed judgement replayed on resampled recorded rounds (gates/round_resample.hpp).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "common/build_paths.hpp"
#include "gates/config.hpp"
#include "gates/error.hpp"
#include "gates/round_resample.hpp"

using namespace atlas;
using namespace atlas::gates;

namespace {

/// A record's timed section with `n` rounds of us_per_token: per-side noise `noise`, a quarter of
/// the rounds with the head side waiting 40 % of its run (disturbed).
nlohmann::json timed_record(int n, double noise, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> z(0, 1);
  nlohmann::json rounds = nlohmann::json::array();
  for (int i = 0; i < n; ++i) {
    const double b = 25 * (1 + noise * z(rng)), h = 25 * (1 + noise * z(rng));
    rounds.push_back({{"values", {{"decode-anatomy/us_per_token_less_runqueue", {{"base", b}, {"head", h}}}}},
                      {"base_wall_s", 0.8},
                      {"head_wall_s", 0.8},
                      {"base_wait_share", 0.01},
                      {"head_wait_share", i % 4 == 0 ? 0.4 : 0.01}});
  }
  return {{"verdicts", {{"timed", {{"outcome", {{"rounds", rounds}}}}}}}};
}

}  // namespace

TEST_CASE("recorded_rounds: both sides' values, walls and waits per round; a record without timed rounds is named") {
  const auto r = recorded_rounds(timed_record(8, 0.02, 3), "decode-anatomy/us_per_token_less_runqueue", "r.json");
  REQUIRE(r.size() == 8);
  CHECK(r[0].head_wait_share == doctest::Approx(0.4));
  CHECK(r[1].head_wait_share == doctest::Approx(0.01));
  CHECK(r[0].base_wall_s == doctest::Approx(0.8));
  CHECK(recorded_rounds(timed_record(8, 0.02, 3), "ttft/other", "r.json").empty());
  CHECK_THROWS_WITH_AS(recorded_rounds(nlohmann::json::object(), "decode-anatomy/us_per_token_less_runqueue", "r.json"),
                       doctest::Contains("r.json: no verdicts.timed.outcome.rounds"), GateError);
}

TEST_CASE("resample_gate: the committed rule on resampled rounds: A/A rarely exit 1, a planted 5% caught, deterministic") {
  const auto cfg = load_gate_config(std::filesystem::path(ATLAS_SOURCE_DIR) / "gates" / "config" / "pr.json");
  const auto pool = recorded_rounds(timed_record(200, 0.02, 7), "decode-anatomy/us_per_token_less_runqueue", "r.json");
  const auto aa = resample_gate(pool, cfg.timed, "decode-anatomy/us_per_token_less_runqueue", 0.0, 300);
  INFO("A/A: exit1 " << aa.regression << " exit2 " << aa.inconclusive << " pass " << aa.pass);
  CHECK(aa.runs == 300);
  CHECK(aa.regression + aa.inconclusive + aa.pass == 300);
  CHECK(aa.regression <= 3);
  CHECK(aa.pass >= 270);
  const auto planted = resample_gate(pool, cfg.timed, "decode-anatomy/us_per_token_less_runqueue", 0.05, 300);
  INFO("planted: exit1 " << planted.regression << " exit2 " << planted.inconclusive);
  CHECK(planted.regression >= 285);
  CHECK(planted.pass == 0);
  const auto again = resample_gate(pool, cfg.timed, "decode-anatomy/us_per_token_less_runqueue", 0.05, 300);
  CHECK(again.regression == planted.regression);
  CHECK(again.mean_rounds == planted.mean_rounds);
  CHECK_THROWS_AS(resample_gate({}, cfg.timed, "decode-anatomy/us_per_token_less_runqueue", 0.0, 10), GateError);
  CHECK_THROWS_AS(resample_gate(pool, cfg.timed, "ttft/nothing", 0.0, 10), GateError);
}
