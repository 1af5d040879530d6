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
  std::vector<PairedVerdict> verdicts;  ///< one per judged metric
};

class StoppingRule {
 public:
  virtual ~StoppingRule() = default;
  /// Why to stop now, or nullopt to run another pair of rounds.
  virtual std::optional<std::string> should_stop(const RoundState& s) const = 0;
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

}  // namespace atlas::records
