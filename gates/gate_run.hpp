#pragma once
// The rerun policy of a gate as a pure loop over a callback: run the gate's suites, compare with
// the baseline, and while some timed metric needs more samples (too few, or worse beyond the
// margin but not yet significant: Pinpoint's UNKNOWN), run just those suites again and pool
// the samples, up to `rerun_cap` extra attempts; then, when timed metrics regressed, run their
// suites once more and keep only the regressions that fresh run reproduces on its own
// (GateConfig::confirm_timed_regressions); then answer. Gates never run a model: the
// caller's callback does (the CLI passes one that runs suites through the suites library; tests
// pass synthetic records).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/baseline.hpp"
#include "gates/compare.hpp"
#include "gates/config.hpp"
#include "records/record.hpp"

namespace atlas::gates {

/// Runs `suites` (names from the gate config) once and returns their record. `attempt` counts
/// from 0.
using RunSuites = std::function<records::Record(int attempt, const std::vector<std::string>& suites)>;

/// Watches each attempt (the quiet-box monitor): end() returns a reason when the attempt's
/// samples must be dropped (e.g. taken under a thermal slowdown); dropped attempts are counted
/// and use up the rerun cap like any other.
class AttemptGuard {
 public:
  virtual ~AttemptGuard() = default;
  virtual void begin(int attempt) = 0;
  virtual std::optional<std::string> end(int attempt) = 0;
  /// What the guard saw over all attempts, for the record.
  virtual nlohmann::json report() const { return nullptr; }
};

struct AttemptLog {
  int attempt = 0;
  std::vector<std::string> suites;
  bool dropped = false;
  std::string drop_reason;
  bool confirmation = false;  ///< the fresh run that must reproduce a timed regression
  /// Metric keys whose verdicts asked for this attempt: too few samples (a rerun) or a timed
  /// regression (the confirmation); empty for the first attempt.
  std::vector<std::string> because;
};

struct GateOutcome {
  records::Record record;  ///< samples pooled over the kept attempts; `verdicts` filled in
  Comparison comparison;
  std::vector<AttemptLog> attempts;
  int dropped_attempts = 0;
  Overall overall = Overall::pass;
  std::string reason;  ///< when no attempt could be judged (all dropped, invalid run)
};

/// Appends the samples of every metric of `from` to `into` (adding suites/metrics it lacks).
void pool_samples(records::Record& into, const records::Record& from);

GateOutcome run_gate(const GateConfig& cfg, const Baseline& baseline, const RunSuites& run_suites,
                     AttemptGuard* guard = nullptr);

/// The gate's final answer from its parts: comparison overall; any merge-base violation ->
/// regression; a box that is not quiet (unless allowed) makes timed verdicts untrustworthy, so
/// the answer is inconclusive unless an exact (counted/accuracy) metric regressed, which noise
/// cannot cause. `reasons` explains each downgrade.
struct GateDecision {
  Overall overall = Overall::pass;
  std::vector<std::string> reasons;
};
GateDecision decide(const GateOutcome& outcome, bool merge_base_ok, bool box_quiet, bool allow_noisy);

nlohmann::json to_json(const AttemptLog& a);

}  // namespace atlas::gates
