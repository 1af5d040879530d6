#pragma once
// The gate's timed judgement: base (the merge-base build) and head (this build) run the same
// suite config interleaved, AB BA AB BA ..., on the same box in the same minutes, and each timed
// metric is judged on the round-paired values (records/paired_judgement.hpp) until the stopping
// rule says decided or a cap is hit. Gates never run a model: `RunSide` (the CLI passes one that
// starts each side's atlas-bench binary as a subprocess; tests pass synthetic records) does.
//
// Load during a round: a side whose process waited for a CPU (run-queue wait) or lost the CPU to
// the hypervisor (steal) for more than `max_wait_share` of its wall time, or two sides whose
// wait shares differ by more than `max_wait_gap`, disturbed their round. Only the paired rounds
// in which both sides were given their CPU alike are judged: a wait w stretches a side's wall
// time by about w, so the round's log-ratio moves by about the gap of the two waits, which the
// pairing does not cancel (the same wait on both sides it does). Disturbed rounds are counted,
// never judged (nvbench drops throttled samples the same way) and never end the run: the time
// budget goes on waiting for rounds that were given their CPU. A metric still undecided at the
// end with more than `max_disturbed_share` of the rounds disturbed says load, not noise, was the
// reason (inconclusive: load).
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/compare.hpp"
#include "records/paired_judgement.hpp"
#include "records/record.hpp"
#include "records/stopping_rule.hpp"

namespace atlas::gates {

enum class Side { base, head };
const char* to_string(Side s);

/// One run of one side.
struct SideRun {
  records::Record record;        ///< the side's record (its metrics' samples)
  std::string failure;           ///< non-empty: the run failed (exit status, message); the round is lost
  double wall_s = 0;             ///< the process's wall time
  double run_queue_wait_s = 0;   ///< time its threads waited on a run queue (/proc/<pid>/task/*/schedstat)
  double steal_share = 0;        ///< hypervisor steal over the run, share of all CPUs' time (/proc/stat)
};
using RunSide = std::function<SideRun(Side side, int round)>;

/// A gated timed metric: "<suite>/<metric>" and its relative tolerance.
struct TimedMetric {
  std::string key;
  double tolerance = 0.03;
};

struct InterleavedSettings {
  std::vector<TimedMetric> metrics;
  records::PairedSettings paired;
  double max_wait_share = 0.05;       ///< run-queue wait or steal above this share of wall time: round disturbed
  double max_wait_gap = 0.03;         ///< the sides' wait shares differ by more than this: round disturbed
  double max_disturbed_share = 0.25;  ///< undecided with more disturbed rounds than this: status load
};

struct RoundLog {
  int round = 0;
  bool head_first = false;
  double base_wall_s = 0, head_wall_s = 0;
  double base_wait_share = 0, head_wait_share = 0;  ///< max(run-queue wait / wall, steal share)
  bool disturbed = false;
  std::string why;  ///< why disturbed, or the failure
  std::map<std::string, std::pair<double, double>> values;  ///< metric -> {base, head} (medians of the run)
};

/// One look at the data (records/stopping_rule.hpp): after how many judged rounds, at which confidence.
struct LookLog {
  int rounds = 0;
  double confidence = 0;
};

enum class TimedStatus {
  regression,  ///< worse by more than the tolerance, significantly (exit 1)
  pass,        ///< not worse by the tolerance (same, improved, or CI_hi < tolerance)
  undecided,   ///< neither after the rounds allowed (exit 2)
  noisy,       ///< "not gated: noise X% > tolerance Y%" (exit 2): this box cannot resolve the tolerance
  load,        ///< load during the run made the verdict untrustworthy (exit 2)
  missing,     ///< a side did not produce the metric (exit 2; the reason says which)
};
const char* to_string(TimedStatus s);

struct TimedVerdict {
  TimedMetric metric;
  std::string unit;
  records::Better better = records::Better::lower;
  TimedStatus status = TimedStatus::undecided;
  records::PairedVerdict paired;
  std::optional<double> base_median, head_median;  ///< medians of the judged rounds' values
  std::string why;
};

struct InterleavedOutcome {
  std::vector<TimedVerdict> verdicts;
  std::vector<RoundLog> rounds;
  std::vector<LookLog> look_log;
  int disturbed_rounds = 0;
  std::string stop_reason;
  double elapsed_s = 0;
  Overall overall = Overall::pass;
  std::string failure;  ///< set when a side failed (the judgement is inconclusive)
  nlohmann::json stopping_rule;
};

/// Runs rounds until `stop` says so and judges every metric in `s.metrics`: after every pair of
/// rounds `stop.look` says whether to judge now and at which confidence; a metric decided at a
/// look (a regression, or a regression of its tolerance ruled out) keeps that verdict; after a
/// look that is not final `stop.should_stop` may end the run. A side that fails ends the loop: the outcome is inconclusive with the reason.
/// `now_s` is the clock (seconds, monotonic); tests pass a fake one.
InterleavedOutcome run_interleaved(const InterleavedSettings& s, const RunSide& run_side,
                                   const records::StoppingRule& stop, const std::function<double()>& now_s = {});

/// The final status of one metric from its paired verdict and the load seen (the rule above).
TimedVerdict classify(const TimedMetric& m, const records::PairedVerdict& v, int disturbed_rounds, int rounds_run,
                      const InterleavedSettings& s);

/// Regression anywhere -> regression; else anything not pass -> inconclusive; else pass.
Overall overall_of(const std::vector<TimedVerdict>& verdicts);

nlohmann::json to_json(const InterleavedOutcome& o);

}  // namespace atlas::gates
