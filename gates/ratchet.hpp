#pragma once
// Moving a BASELINE: init, ratchet (tighten only), accept (explicit, may loosen), freeze and
// unfreeze, remove. Every move appends a history entry (commit, date, old, new, reason,
// action) so that merge_base_check can tell a reviewed loosening from a silent one.
// Semantics follow Betterer's results file: improvements are folded in, worsening needs an
// explicit acknowledgement; a frozen file or metric never moves.
#include <string>
#include <vector>

#include "gates/baseline.hpp"
#include "gates/config.hpp"
#include "records/record.hpp"

namespace atlas::gates {

/// Who and when, for history entries.
struct ChangeStamp {
  std::string commit;  ///< the record's commit (or HEAD for freeze/unfreeze)
  std::string date;    ///< ISO-8601 UTC (records::utc_now_iso())
};

/// Every function that moves a baseline from a record throws GateError when the record was made
/// with a test hook active (records::active_test_hooks: a planted slowdown must never become
/// the baseline).

/// A fresh baseline from a record: every metric with samples, value = median of its samples,
/// tolerance = the config's default for its kind, one "init" history entry each. Timed metrics
/// are left out on a machine class that is not quiet (timed_baselines_gated): there they are
/// judged against the merge-base, and a stored value would only record one run's luck.
Baseline init_baseline(const records::Record& r, const GateConfig& cfg, const std::string& machine_class,
                       const ChangeStamp& stamp, const std::string& reason);

struct RatchetResult {
  std::vector<std::string> tightened;  ///< significantly better -> moved to the candidate
  std::vector<std::string> added;      ///< new in the record -> added (a new gate only tightens)
  std::vector<std::string> frozen;     ///< better but frozen (file or metric) -> not moved
  std::vector<std::string> timed_not_stored;  ///< timed, on a class that is not quiet -> never moved or added
};

/// Moves each metric whose verdict against `record` is "improved" (the regression rule run in
/// the other direction: exact metrics by any amount, timed beyond the margin with p < alpha)
/// to the candidate's median and samples. Never loosens; a frozen file or metric never moves;
/// timed metrics never move on a machine class that is not quiet (one lucky run on a shared box
/// made 4 of 5 later gate runs fail when it was allowed).
RatchetResult ratchet(Baseline& b, const records::Record& record, const GateConfig& cfg, const ChangeStamp& stamp);

/// Sets `key` to the record's value (median and samples, unit/kind/direction from the record),
/// loosening if need be, with an "accept" history entry. Throws GateError when the reason is
/// empty, the file or metric is frozen, or the record lacks the metric.
void accept(Baseline& b, const std::string& key, const records::Record& record, const std::string& reason,
            const GateConfig& cfg, const ChangeStamp& stamp);

/// Drops a gate, recording an file-level "remove" entry (a removal loosens, so it must be
/// explicit like accept). Throws GateError when the reason is empty, the file or metric is
/// frozen or the metric is unknown.
void remove_metric(Baseline& b, const std::string& key, const std::string& reason, const ChangeStamp& stamp);

/// Freeze/unfreeze the whole file (key empty) or one metric. Throws GateError for an empty
/// reason, an unknown metric, or a no-op (already frozen / not frozen).
void freeze(Baseline& b, const std::string& key, const std::string& reason, const ChangeStamp& stamp);
void unfreeze(Baseline& b, const std::string& key, const std::string& reason, const ChangeStamp& stamp);

}  // namespace atlas::gates
