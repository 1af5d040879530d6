#pragma once
// The timed judgement's error rates from resampling recorded rounds: a proof of 40 live gate
// runs cannot tell a 1 % false-alarm rate from 3 % (the 95 % interval of 0/40 reaches 8.8 %), so
// thousands of gate runs are replayed on rounds drawn with replacement from the rounds real gate
// runs recorded (verdicts.timed.outcome.rounds: both sides' values, wall times and CPU waits).
// Each replay is the gate's own loop (run_interleaved with the committed stopping rule, the
// disturbed-round rule and the time budget on a clock advanced by the drawn rounds' wall
// times); a planted slowdown multiplies the head value of every drawn round. What it cannot
// show: rounds are drawn independently, so drift that lasts several rounds (which the live
// interleaving cancels within a round, not across rounds) is represented only as round-to-round
// spread; the live proof is the check on that.
#include <cstdint>
#include <string>
#include <vector>

#include "gates/interleaved.hpp"
#include "gates/timed_config.hpp"

namespace atlas::gates {

/// One recorded round of one metric.
struct RecordedRound {
  double base = 0, head = 0;                 ///< the sides' values (medians of their runs)
  double base_wall_s = 0, head_wall_s = 0;   ///< the sides' wall times
  double base_wait_share = 0, head_wait_share = 0;
};

/// The rounds of `metric` in a record's `verdicts.timed.outcome.rounds` (a round without the
/// metric is skipped). Throws GateError naming `source` when the record has no timed rounds.
std::vector<RecordedRound> recorded_rounds(const nlohmann::json& record, const std::string& metric, const std::string& source);

struct ResampleTally {
  int runs = 0;
  int regression = 0, pass = 0, inconclusive = 0;
  double mean_rounds = 0;     ///< rounds run per replay, disturbed included
  double mean_elapsed_s = 0;  ///< replayed gate time (the drawn rounds' wall times)
};

/// Replays the gate `runs` times (seeds seed..seed+runs-1, deterministic) on rounds drawn with
/// replacement from `pool`, the head values multiplied by (1 + `planted`) (0: an A/A replay).
/// Only `metric` is judged, with the config's tolerance for it. Throws GateError when the pool is
/// empty or the metric is not one of the config's timed metrics.
ResampleTally resample_gate(const std::vector<RecordedRound>& pool, const TimedJudgementConfig& cfg, const std::string& metric,
                            double planted, int runs, std::uint64_t seed = 1);

}  // namespace atlas::gates
