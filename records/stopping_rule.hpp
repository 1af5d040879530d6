#pragma once
// When interleaved A/B rounds stop: a pluggable object (nvbench's stopping criteria are objects
// too), consulted after every pair of rounds (AB, BA) with the verdicts so far.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "records/paired_judgement.hpp"

namespace atlas::records {

struct RoundState {
  int rounds = 0;                       ///< rounds judged so far (disturbed rounds excluded)
  int rounds_run = 0;                   ///< rounds run, disturbed ones included
  double elapsed_s = 0;                 ///< since the first round started
  int looks_made = 0;                   ///< looks at the data made so far (this one excluded)
  std::vector<PairedVerdict> verdicts;  ///< one per judged metric
};

/// A look at the data: judge every metric not yet decided at `confidence`.
struct Look {
  double confidence = 0.99;  ///< two-sided coverage of this look's interval
  bool final = false;        ///< the last look: stop after it whatever it says
  std::string reason;        ///< why it is the last (a cap), else empty
};

class StoppingRule {
 public:
  virtual ~StoppingRule() = default;
  /// Asked after every pair of rounds (AB, BA), before any judging: whether to look at the data
  /// now and at which confidence; nullopt = run another pair without looking. The default looks
  /// after every pair at `fallback` confidence (no peeking control: a caller that looks more than
  /// once must account for it, see GroupSequential).
  virtual std::optional<Look> look(const RoundState& s, double fallback_confidence) const;
  /// Asked after a look that was not final, with its verdicts: why to stop now, or nullopt to run
  /// another pair of rounds.
  virtual std::optional<std::string> should_stop(const RoundState& s) const = 0;
  /// The confidence of a closing look the caller makes when the rounds end without a final look
  /// (a side failed): the default is `fallback`.
  virtual double closing_confidence(const RoundState& s, double fallback_confidence) const;
  virtual nlohmann::json describe() const = 0;
};

/// Which answer counts as decided.
enum class Question {
  regression,  ///< the gate: "is head worse by the tolerance?" — regression, or CI_hi < τ
  two_sided,   ///< ab: regression, improved or same
};

/// Runs at least `min_rounds` rounds, then stops as soon as every metric is decided, or when
/// every undecided metric's minimum detectable effect at `max_rounds` (from the A/A noise so far)
/// still exceeds its tolerance (more rounds cannot decide it), or when more than
/// `max_disturbed_share` of the rounds were disturbed by load (the answer will be inconclusive
/// whatever follows, so the box is not kept busier), or when `max_rounds` rounds have run, or
/// when another pair of rounds would pass `time_cap_s` (at the mean round time so far).
class DecidedOrCap final : public StoppingRule {
 public:
  DecidedOrCap(Question q, int min_rounds, int max_rounds, double time_cap_s, PairedSettings s = {},
               double max_disturbed_share = 1.0);
  std::optional<std::string> should_stop(const RoundState& s) const override;
  nlohmann::json describe() const override;
  static bool decided(Question q, const PairedVerdict& v);

 private:
  Question q_;
  int min_rounds_, max_rounds_;
  double time_cap_s_;
  PairedSettings settings_;
  double max_disturbed_share_;
};

/// A group-sequential design with Bonferroni alpha spending (the gate's rule, docs/gates.md):
/// the data are looked at only when the judged rounds reach each of a fixed schedule of K looks
/// (e.g. 12, 24, 40, 60, 80), each look's interval at confidence 1 − α/K where α = 1 −
/// `confidence`; a metric decided at a look keeps that verdict. By the union bound the chance
/// that any look of the run shows a false regression (or rules one out falsely) is at most α
/// whatever the data, for K looks at any times fixed in advance. Caps end the run early with a
/// final look that spends the α the skipped looks would have spent (1 − (α − looks_made·α/K)):
/// rounds run (disturbed ones included) reaching `max_rounds_run`, another pair passing
/// `time_cap_s`. Disturbed rounds never end the run: they are not judged, and the time budget
/// goes on rounds that were given their CPU (the caller's judged count, RoundState::rounds, is
/// what reaches the looks). Between looks nothing is judged; after a look that is not final the run stops
/// when every metric is decided, or (the gate's question) as soon as one metric is a regression. Unlike DecidedOrCap it never stops because the A/A noise seen so
/// far looks too large: an estimate from a few rounds is itself noisy, and stopping on it was why
/// 5 of 40 planted 5% slowdowns were left undecided at 8 rounds (2026-12-01).
class GroupSequential final : public StoppingRule {
 public:
  GroupSequential(Question q, std::vector<int> looks, int max_rounds_run, double time_cap_s, double confidence);
  std::optional<Look> look(const RoundState& s, double fallback_confidence) const override;
  std::optional<std::string> should_stop(const RoundState& s) const override;
  double closing_confidence(const RoundState& s, double fallback_confidence) const override;
  nlohmann::json describe() const override;
  /// 1 − α/K: the confidence of every scheduled look.
  double look_confidence() const;
  const std::vector<int>& looks() const { return looks_; }

 private:
  Question q_;
  std::vector<int> looks_;
  int max_rounds_run_;
  double time_cap_s_;
  double alpha_;
};

/// Checks a look schedule: strictly increasing, the first at least the fewest rounds in which the
/// exact interval at confidence 1 − (1 − confidence)/K is finite. Empty string when valid, else why.
std::string check_looks(const std::vector<int>& looks, double confidence);

}  // namespace atlas::records
