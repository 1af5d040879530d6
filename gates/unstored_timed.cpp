#include "gates/unstored_timed.hpp"

#include <algorithm>

namespace atlas::gates {

void explain_unstored_timed(Comparison& c, const GateConfig& cfg, const std::string& machine_class,
                            const std::string& timed_skipped) {
  if (timed_baselines_gated(cfg, machine_class)) return;
  for (auto& v : c.verdicts) {
    if (v.status != VerdictStatus::new_metric || v.kind != records::MetricKind::timed) continue;
    const bool judged = std::any_of(cfg.timed.metrics.begin(), cfg.timed.metrics.end(),
                                    [&](const TimedMetric& m) { return m.key == v.key; });
    const std::string where = timed_skipped.empty() ? "judged against the merge-base (the timed table)"
                                                    : "judged against the merge-base, not this time (" + timed_skipped + ")";
    v.why = judged ? "timed: " + where + ", never stored for " + machine_class
                   : std::string(kUnstoredTimedWhy) + machine_class +
                         " (not a quiet machine class, so `baseline ratchet` never stores timed values here)";
  }
}

}  // namespace atlas::gates
