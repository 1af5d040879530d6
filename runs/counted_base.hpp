#pragma once
// The counted metrics (instructions and simulated cache misses under callgrind) of the merge-base
// counted on this CPU in this job, and the head's judged against them (gates/counted_vs_base.hpp):
// the merge-base binary runs `run --suite instructions` with the head's suite config as a
// subprocess; its record's counts become the reference. A planted --inject-decode-work goes to
// the head's in-process run only.
#include <string>
#include <vector>

#include "gates/compare.hpp"
#include "gates/config.hpp"
#include "gates/gate_run.hpp"
#include "records/record.hpp"
#include "runs/base_binary.hpp"

namespace atlas::runs {

struct CountedBaseReport {
  bool ran = false;
  std::string skipped_reason;       ///< why the merge-base was not counted
  bool skipped_is_failure = false;  ///< the base side failed (inconclusive), not merely absent
  std::string base_commit;
  gates::Comparison comparison;     ///< head vs merge-base, one verdict per counted metric
  double seconds = 0;               ///< the base side's run
};

/// Counts the base and judges `head`'s counted suite against it. Never throws for a failed base
/// side (the reason is in the report); throws GateError when the two sides counted on different
/// CPUs, which cannot happen in one job unless the base binary's suite reports another CPU.
CountedBaseReport judge_counted_vs_base(const gates::GateConfig& cfg, const records::Record& head, const BaseBinary& base,
                                        const std::string& data_dir, const std::string& model);

/// Puts the counted judgement into the gate's outcome, replacing the counted suite's rows: the
/// verdicts against the merge-base when it was counted; else, when `stored` holds counts made on
/// this CPU (gates::stored_counts_match), the verdicts against them; else the rows are "new"
/// (reported, not gated). A base side that failed adds a needs-more-samples row (inconclusive)
/// naming the reason; a missing merge-base (outside git, no target) and a CPU
/// without stored counts are never an error. Recomputes the comparison's and the outcome's
/// overall answer. Returns the notes for the report (what was judged against what, and what the
/// stored counts are on this CPU).
std::vector<std::string> merge_counted_verdicts(gates::GateOutcome& outcome, const CountedBaseReport& counted,
                                                const gates::Baseline* stored, const gates::GateConfig& cfg);

nlohmann::json to_json(const CountedBaseReport& r);

}  // namespace atlas::runs
